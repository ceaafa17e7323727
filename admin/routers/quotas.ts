// Admin: per-organization overrides of the plan's limits, and the organization's use against them.
import { z } from 'zod';
import { quotaOverridesSchema } from '../../db/plans.ts';
import { quotaUsage } from '../../db/quota-usage.ts';
import { getQuotas, setQuotas } from '../../db/quotas.ts';
import { procedure, router } from '../trpc.ts';

// Each field may be set, or null to fall back to the plan's value.
const changes = z.object(
  Object.fromEntries(
    Object.entries(quotaOverridesSchema.shape).map(([k, v]) => [k, v.unwrap().nullable().optional()]),
  ) as {
    [K in keyof typeof quotaOverridesSchema.shape]: z.ZodOptional<
      z.ZodNullable<ReturnType<(typeof quotaOverridesSchema.shape)[K]['unwrap']>>
    >;
  },
);

export const quotasRouter = router({
  get: procedure
    .meta({ description: "Show an organization's plan, its overrides and the limits in force" })
    .input(z.object({ orgId: z.uuid() }))
    .query(({ ctx, input }) => getQuotas(ctx.db, input.orgId)),
  usage: procedure
    .meta({ description: "Show an organization's spend, storage and rate-limit use against its limits" })
    .input(z.object({ organizationId: z.uuid() }))
    .query(({ ctx, input }) =>
      quotaUsage(ctx.db, input.organizationId, new Date(), ctx.config.BILLING_ENABLED),
    ),
  set: procedure
    .meta({
      description: "Override an organization's plan limits (null returns a limit to the plan's value)",
    })

    .input(
      changes
        .extend({ orgId: z.uuid() })
        .strict()
        .refine((i) => Object.keys(i).length > 1, {
          message: 'Give at least one limit to set (or null to reset)',
        }),
    )
    .mutation(({ ctx, input }) => {
      const { orgId, ...rest } = input;
      return setQuotas(ctx.db, orgId, rest);
    }),
});
