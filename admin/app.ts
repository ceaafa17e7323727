// The admin plane over HTTP: tRPC at /trpc behind `Authorization: Bearer <ADMIN_TOKEN>`.
import { TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { Hono } from 'hono';
import { verifyAdminToken } from '../db/bootstrap.ts';
import { createEmbedders } from '../runner/embeddings/index.ts';
import { createStorage } from '../storage/index.ts';
import { adminRouter } from './router.ts';
import type { AdminContext } from './trpc.ts';

/** The admin app; storage and embedders default to what the configuration names. */
export function createAdminApp(
  deps: Omit<AdminContext, 'storage' | 'embedders'> & Partial<Pick<AdminContext, 'storage' | 'embedders'>>,
) {
  const ctx: AdminContext = {
    ...deps,
    storage: deps.storage ?? createStorage(deps.config),
    embedders: deps.embedders ?? createEmbedders(deps.config),
  };
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.all('/trpc/*', (c) =>
    fetchRequestHandler({
      endpoint: '/trpc',
      req: c.req.raw,
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
        return ctx;
      },
    }),
  );
  app.notFound((c) => c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}
