// Admin: organizations.
import { z } from 'zod';
import { createOrganization, listOrganizations, setOrganizationPlan } from '../../db/organizations.ts';
import { PLAN_NAMES } from '../../db/plans.ts';
import { procedure, router } from '../trpc.ts';

const slug = z
  .string()
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lowercase letters, digits and single dashes')
  .max(64);

export const orgsRouter = router({
  create: procedure
    .meta({ description: 'Create an organization (plan: free unless given)' })
    .input(
      z.object({
        name: z.string().trim().min(1).max(100),
        slug: slug.optional(),
        plan: z.enum(PLAN_NAMES).optional(),
      }),
    )
    .mutation(({ ctx, input }) => createOrganization(ctx.db, input)),
  list: procedure
    .meta({ description: 'List every organization' })
    .query(({ ctx }) => listOrganizations(ctx.db)),
  setPlan: procedure
    .meta({ description: "Change an organization's plan (free, pro, team, enterprise)" })
    .input(z.object({ orgId: z.uuid(), plan: z.enum(PLAN_NAMES) }))
    .mutation(({ ctx, input }) => setOrganizationPlan(ctx.db, input.orgId, input.plan)),
});
