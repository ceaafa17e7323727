// Admin: organization members.
import { z } from 'zod';
import { ADMIN_ACTOR } from '../../db/audit-logs.ts';
import { addMember, listMembers, MEMBER_ROLES, removeMember, setMemberRole } from '../../db/members.ts';
import { procedure, router } from '../trpc.ts';

const membership = z.object({ orgId: z.uuid(), userId: z.uuid() });
const withRole = membership.extend({ role: z.enum(MEMBER_ROLES) });
const ids = (i: { orgId: string; userId: string }) => ({ organizationId: i.orgId, userId: i.userId });

export const membersRouter = router({
  add: procedure
    .meta({ description: 'Add a user to an organization with a role' })
    .input(withRole)
    .mutation(({ ctx, input }) => addMember(ctx.db, ADMIN_ACTOR, { ...ids(input), role: input.role })),
  remove: procedure
    .meta({ description: 'Remove a user from an organization' })
    .input(membership)
    .mutation(({ ctx, input }) => removeMember(ctx.db, ADMIN_ACTOR, ids(input))),
  setRole: procedure
    .meta({ description: "Change a member's role in an organization" })
    .input(withRole)
    .mutation(({ ctx, input }) => setMemberRole(ctx.db, ADMIN_ACTOR, { ...ids(input), role: input.role })),
  list: procedure
    .meta({ description: "List an organization's members and their roles" })
    .input(z.object({ orgId: z.uuid() }))
    .query(({ ctx, input }) => listMembers(ctx.db, input.orgId)),
});
