// Caps request bodies that are read whole (JSON): a client cannot make the API buffer an unbounded
// body. Multipart uploads stream to storage and are capped by their own routes.

import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { ServiceError } from '../../db/errors.ts';

export const JSON_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

export function jsonBodyLimit(maxSize = JSON_BODY_LIMIT_BYTES) {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw new ServiceError(413, `Request body over ${maxSize} bytes`);
    },
  });
  return createMiddleware(async (c, next) => {
    if (c.req.header('content-type')?.startsWith('multipart/form-data')) return next();
    return limit(c, next);
  });
}
