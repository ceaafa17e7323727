// Admin: completion callbacks. `secret` shows a workspace's callback signing secret (made on first
// use), which operators hand to the receivers that verify signatures; `rotateSecret` replaces it;
// `deliveries` lists an execution's delivery attempts, with the receiver's status or the error.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { callbackSecret, listDeliveries, rotateCallbackSecret } from '../../db/callbacks.ts';
import { procedure, router } from '../trpc.ts';

export const callbacksRouter = router({
  secret: procedure
    .meta({ description: "Show a workspace's completion-callback signing secret (made on first use)" })
    .input(z.object({ workspaceId: z.uuid() }))
    .query(({ ctx, input }) => callbackSecret(ctx.db, ctx.encryptionKey, input.workspaceId)),
  rotateSecret: procedure
    .meta({ description: "Replace a workspace's completion-callback signing secret" })
    .input(z.object({ workspaceId: z.uuid() }))
    .mutation(({ ctx, input }) =>
      rotateCallbackSecret(ctx.db, ctx.encryptionKey, ADMIN_ACTOR, input.workspaceId),
    ),
  deliveries: procedure
    .meta({ description: "List an execution's completion-callback delivery attempts" })
    .input(z.object({ executionId: z.uuid() }))
    .query(({ ctx, input }) => listDeliveries(ctx.db, input.executionId)),
});
