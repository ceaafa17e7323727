// Caps request bodies that are read whole (JSON): a client cannot make the API buffer an unbounded
// body. Multipart uploads stream to storage and are capped by their own routes.
import type { IncomingMessage } from 'node:http';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { ServiceError } from '../../errors.ts';

export const JSON_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export function jsonBodyLimit(maxSize = JSON_BODY_LIMIT_BYTES) {
  const tooLarge = () => {
    throw new ServiceError(413, `Request body over ${maxSize} bytes`);
  };
  const limit = bodyLimit({ maxSize, onError: tooLarge });
  return createMiddleware(async (c, next) => {
    if (c.req.header('content-type')?.startsWith('multipart/form-data')) return next();
    // Served by Node, the framing is settled before we run: Node's HTTP parser delivers exactly
    // Content-Length bytes, and without that header or Transfer-Encoding there is no body. So the
    // header decides, without hono's bodyLimit asking for the request's Web stream first, which
    // turns every request (a GET too) into a full Fetch Request, read through a Web stream.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && incoming.headers['transfer-encoding'] === undefined) {
      const length = incoming.headers['content-length'];
      if (length === undefined) return next();
      return Number(length) > maxSize ? tooLarge() : next();
    }
    // Chunked bodies, and requests made in process (tests, other runtimes): counted as they are read.
    return limit(c, next);
  });
}
