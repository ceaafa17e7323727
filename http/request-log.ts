// One access-log line per request, and a logger bound to the request's id for everything logged
// while it is served (the error handler's 500 line carries the same id as the access line). Only
// who asked is logged (the key's id and scope), never a header, a body or a query string.
import { createMiddleware } from 'hono/factory';
import type { Principal } from '../db/api-keys.ts';
import type { Logger } from '../logger.ts';

type RequestLogEnv = { Variables: { requestId: string; log: Logger } };

// Probes and scrapes arrive every few seconds: logged at debug so they do not bury the traffic,
// unless they fail (a 503 from /ready, a refused scrape).
const PROBES = new Set(['/health', '/ready', '/metrics']);

export function requestLog(log: Logger) {
  return createMiddleware<RequestLogEnv>(async (c, next) => {
    const started = performance.now();
    const requestId = c.get('requestId');
    // For what handlers log; the access line itself carries the id as a field, the same line a child
    // would write, without making a child for every request.
    c.set('log', log.child({ requestId }));
    try {
      await next();
      // hono/request-id sets the header before the handler runs, which a handler answering with a
      // Response of its own (tRPC, file downloads) replaces: the caller still gets the id to quote.
      if (!c.res.headers.has('X-Request-Id')) c.header('X-Request-Id', c.get('requestId'));
    } finally {
      const principal = (c.var as { principal?: Principal }).principal;
      const fields = {
        requestId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(principal ? who(principal) : {}),
      };
      if (PROBES.has(c.req.path) && c.res.status < 400) log.debug('request', fields);
      else log.info('request', fields);
    }
  });
}

/** The caller by ids only: the key that authenticated and the user or workspace it acts for. */
function who(principal: Principal) {
  return principal.type === 'personal'
    ? { keyId: principal.keyId, userId: principal.userId }
    : { keyId: principal.keyId, workspaceId: principal.workspaceId };
}
