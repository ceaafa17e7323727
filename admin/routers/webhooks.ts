// Admin: inbound webhooks. `create` and `rotateToken` answer the webhook's URL with its token, the
// only time it is shown; `list` shows masked URLs and whether calls must be signed, never secrets.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { createWebhook, deleteWebhook, listWebhooks, rotateWebhookToken } from '../../db/webhooks.ts';
import { triggerFilter, triggerTarget } from '../trigger-target.ts';
import { procedure, router } from '../trpc.ts';

// An HMAC key shorter than this could be guessed offline from one signed call.
const secret = z
  .string()
  .min(16, 'Use a secret of at least 16 characters')
  .max(1024)
  .describe('The HMAC-SHA256 key callers sign bodies with; unset: calls need no signature');

export const webhooksRouter = router({
  create: procedure
    .meta({
      description:
        "Create an inbound webhook that runs a workflow; the answer holds its URL's token, shown once",
    })
    .input(
      triggerTarget.extend({
        secret: secret.optional(),
        mode: z.enum(['async', 'sync']).default('async'),
      }),
    )
    .mutation(({ ctx, input }) => createWebhook(ctx.db, ctx.encryptionKey, ADMIN_ACTOR, input)),
  list: procedure
    .meta({ description: "List a workspace's or a workflow's webhooks, URLs masked" })
    .input(triggerFilter)
    .query(({ ctx, input }) => listWebhooks(ctx.db, input)),
  delete: procedure
    .meta({ description: 'Delete a webhook: its URL answers 404' })
    .input(z.object({ id: z.uuid() }))
    .mutation(({ ctx, input }) => deleteWebhook(ctx.db, ADMIN_ACTOR, input.id)),
  rotateToken: procedure
    .meta({ description: 'Give a webhook a new URL token: the old URL answers 404 at once' })
    .input(z.object({ id: z.uuid() }))
    .mutation(({ ctx, input }) => rotateWebhookToken(ctx.db, ADMIN_ACTOR, input.id)),
});
