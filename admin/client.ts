// The typed tRPC client of the admin plane, used by the CLI, tests and internal tools.
import { createTRPCClient, httpLink } from '@trpc/client';
import type { AdminRouter } from './router.ts';

export function createAdminClient(options: { url: string; token: string; fetch?: typeof fetch }) {
  return createTRPCClient<AdminRouter>({
    links: [
      httpLink({
        url: options.url,
        headers: { authorization: `Bearer ${options.token}` },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ],
  });
}

export type AdminClient = ReturnType<typeof createAdminClient>;
