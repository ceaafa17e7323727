// Admin: API keys. The plain key is in the answer to `create` only; `list` shows masked keys.
import { z } from 'zod';
import { createApiKey, listApiKeys, revokeApiKey } from '../../db/api-keys.ts';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { SCOPES } from '../../db/key-scopes.ts';
import { procedure, router } from '../trpc.ts';

const name = z.string().trim().min(1).max(100);
// Omitted or empty: the key's full reach. An unknown scope is refused by name, with the list.
const scopes = z
  .array(
    z.enum(SCOPES, {
      error: (issue) =>
        `Unknown scope ${JSON.stringify(issue.input)?.slice(0, 60)}: one of ${SCOPES.join(', ')}`,
    }),
  )
  .max(SCOPES.length * 2)
  .optional();

export const keysRouter = router({
  create: procedure
    .meta({
      description:
        "Create an API key: personal (a user's) or workspace, limited to `scopes` if given; the answer holds the key, shown once",
    })

    .input(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('personal'), userId: z.uuid(), name, scopes }),
        z.object({ type: z.literal('workspace'), workspaceId: z.uuid(), name, scopes }),
      ]),
    )
    .mutation(({ ctx, input }) => createApiKey(ctx.db, ctx.encryptionKey, ADMIN_ACTOR, input)),
  list: procedure
    .meta({ description: "List API keys, masked (all, a user's or a workspace's)" })
    .input(z.object({ userId: z.uuid().optional(), workspaceId: z.uuid().optional() }).optional())
    .query(({ ctx, input }) => listApiKeys(ctx.db, input ?? {})),
  revoke: procedure
    .meta({ description: 'Revoke an API key: it is refused from then on' })
    .input(z.object({ id: z.uuid() }))
    .mutation(({ ctx, input }) => revokeApiKey(ctx.db, ADMIN_ACTOR, input.id)),
});
