// The one place errors become responses: `{error}`, plus `details` on 400. Anything unexpected is a
// 500 that names the request id and is logged with its stack; no stack or SQL reaches the client.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isDatabaseUnavailable } from '../../db/unavailable.ts';
import { ServiceError } from '../../errors.ts';
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
    if (isDatabaseUnavailable(err)) {
      // Not a defect of ours nor the caller's: the database is restarting or unreachable. Clients and
      // load balancers retry a 503; the pool reconnects by itself once the server is back.
      ((c.get('log') as Logger | undefined) ?? log).warn('database unavailable', {
        method: c.req.method,
        path: c.req.path,
        err,
      });
      c.header('Retry-After', '5');
      return c.json({ error: 'The database is unavailable: retry shortly' }, 503);
    }
    const requestId = c.get('requestId');
    const where = { method: c.req.method, path: c.req.path, err };
    // The request's own logger carries its id already (request-log.ts); an error before it ran has none.
    const requestLog = c.get('log') as Logger | undefined;
    if (requestLog) requestLog.error('unhandled error', where);
    else log.error('unhandled error', { requestId, ...where });
    return c.json({ error: 'Internal server error', requestId }, 500);
  };
}

export const notFoundHandler = (c: Context) =>
  c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404);
