// Admin: workspace secrets, used in workflows as `{{NAME}}`. Listing shows names, never values.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { deleteSecret, listSecretNames, setSecret } from '../../db/secrets.ts';
import { procedure, router } from '../trpc.ts';

const secretName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'Letters, digits and _, not starting with a digit');

export const secretsRouter = router({
  set: procedure
    .meta({ description: 'Set a workspace secret, used in workflows as {{NAME}} (sealed at rest)' })
    .input(z.object({ workspaceId: z.uuid(), name: secretName, value: z.string().max(65_536) }))
    .mutation(({ ctx, input }) => setSecret(ctx.db, ctx.encryptionKey, ADMIN_ACTOR, input)),
  list: procedure
    .meta({ description: "List a workspace's secret names (never their values)" })
    .input(z.object({ workspaceId: z.uuid() }))
    .query(({ ctx, input }) => listSecretNames(ctx.db, input.workspaceId)),
  delete: procedure
    .meta({ description: 'Delete a workspace secret' })
    .input(z.object({ workspaceId: z.uuid(), name: secretName }))
    .mutation(({ ctx, input }) => deleteSecret(ctx.db, ADMIN_ACTOR, input)),
});
