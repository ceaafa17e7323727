// The admin plane over HTTP: tRPC at /trpc behind `Authorization: Bearer <ADMIN_TOKEN>`.
import { TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { Registry } from 'prom-client';
import { verifyAdminToken } from '../db/bootstrap.ts';
import { healthRoutes } from '../http/health.ts';
import { createMetricsRegistry, metricsRoutes, registerBacklogGauges } from '../http/metrics.ts';
import { requestLog } from '../http/request-log.ts';
import { jsonSyntaxError } from '../json-errors.ts';
import type { Logger } from '../logger.ts';
import { createEmbedders } from '../runner/embeddings/index.ts';
import { createStorage } from '../storage/index.ts';
import type { ConsoleBuild } from './console/build.ts';
import { consoleRoutes } from './console/serve.ts';
import { adminRouter } from './router.ts';
import type { AdminContext } from './trpc.ts';

/**
 * The admin app; storage and embedders default to what the configuration names. `metrics` is the
 * process's registry (the API's latencies are in it when the API shares the process); without one,
 * the app makes its own at the first scrape. `consoleBuild` is the console's start-up build, when
 * one had to run: / says so while it does.
 */
export function createAdminApp(
  deps: Omit<AdminContext, 'storage' | 'embedders'> &
    Partial<Pick<AdminContext, 'storage' | 'embedders'>> & {
      metrics?: Registry;
      consoleBuild?: ConsoleBuild;
    },
) {
  const ctx: AdminContext = {
    ...deps,
    storage: deps.storage ?? createStorage(deps.config),
    embedders: deps.embedders ?? createEmbedders(deps.config),
  };
  let registry = deps.metrics;
  const metrics = () => {
    registry ??= createMetricsRegistry();
    registerBacklogGauges(registry, ctx.db, ctx.log);
    return registry;
  };
  const app = new Hono<{ Variables: { requestId: string; log: Logger } }>();
  app.use(requestId({ headerName: 'X-Request-Id' }));
  app.use(requestLog(ctx.log));
  app.route('/', healthRoutes(ctx));
  app.route('/', metricsRoutes({ db: ctx.db, config: ctx.config, registry: metrics }));
  app.all('/trpc/*', async (c) => {
    // The input's JSON (a POST's body, a GET's `input` parameter) is read here, so that a syntax
    // error is answered naming its line and column, as the public API does, rather than in
    // JSON.parse's words. tRPC reads the same text again from the request rebuilt around it.
    const body = c.req.method === 'POST' ? await c.req.text() : undefined;
    const input = body ?? c.req.query('input');
    const malformed = input ? jsonSyntaxError(input) : null;
    const req =
      body === undefined
        ? c.req.raw
        : new Request(c.req.raw.url, {
            method: 'POST',
            headers: c.req.raw.headers,
            body,
            signal: c.req.raw.signal,
          });
    return fetchRequestHandler({
      endpoint: '/trpc',
      req,
      router: adminRouter,
      // Refused here, the 401 still has tRPC's shape, so the typed client reports it as an error.
      createContext: async () => {
        const header = c.req.header('authorization') ?? '';
        // The auth scheme is case-insensitive (RFC 9110).
        const token = /^bearer /i.test(header) ? header.slice(7).trim() : '';
        if (!token || !(await verifyAdminToken(ctx.db, ctx.config.ADMIN_TOKEN, token))) {
          throw new TRPCError({
            code: 'UNAUTHORIZED',
            message: 'Missing or invalid admin token: send Authorization: Bearer <ADMIN_TOKEN>',
          });
        }
        if (malformed) {
          const what = body === undefined ? 'input parameter' : 'body';
          throw new TRPCError({ code: 'BAD_REQUEST', message: `Malformed JSON ${what}: ${malformed}` });
        }
        // Procedures log with the request's id.
        return { ...ctx, log: c.get('log') };
      },
    });
  });
  // The console's page and files; the page calls /trpc with the token it was given.
  app.route('/', consoleRoutes({ build: deps.consoleBuild }));
  app.notFound((c) => c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}
