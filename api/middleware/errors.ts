// The one place errors become responses: `{error}`, plus `details` on 400. Anything unexpected is a
// 500 that names the request id and is logged with its stack; no stack or SQL reaches the client.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ServiceError } from '../../db/errors.ts';
import type { Logger } from '../../logger.ts';
import type { ApiEnv } from '../context.ts';

export function errorHandler(log: Logger) {
  return (err: Error, c: Context<ApiEnv>) => {
    if (err instanceof ServiceError) {
      for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
      return c.json(
        err.details ? { error: err.message, details: err.details } : { error: err.message },
        err.status as ContentfulStatusCode,
      );
    }
    if (err instanceof HTTPException && err.status < 500) {
      return c.json({ error: err.message || 'Bad request' }, err.status as ContentfulStatusCode);
    }
    const requestId = c.get('requestId');
    log.error('unhandled error', { requestId, method: c.req.method, path: c.req.path, err });
    return c.json({ error: 'Internal server error', requestId }, 500);
  };
}

export const notFoundHandler = (c: Context) =>
  c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404);
