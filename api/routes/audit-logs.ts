// GET /api/v1/audit-logs: an organization's audit trail, for its admins and owners on Enterprise.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeWorkspace } from '../../db/access.ts';
import { listAuditLogs } from '../../db/audit-logs.ts';
import { activeMembership, findMembership } from '../../db/members.ts';
import { effectiveLimits } from '../../db/plans.ts';
import { isStorableText } from '../../db/tables/values.ts';
import { findWorkspace } from '../../db/workspaces.ts';
import { forbidden, invalidField, notFound } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { queryParams } from '../middleware/validate.ts';
import { isoDate, RANGE_OUT_OF_ORDER, rangeEnd, rangeInOrder, rangeStart } from '../query-dates.ts';

export const auditLogQuery = z
  .object({
    workspaceId: z.uuid(),
    // Compared with Postgres text, which holds no NUL: refused as a 400 rather than failing as a 500.
    action: z.string().min(1).max(100).refine(isStorableText, 'Not storable text').optional(),
    resourceType: z.string().min(1).max(100).refine(isStorableText, 'Not storable text').optional(),
    resourceId: z.string().min(1).max(200).refine(isStorableText, 'Not storable text').optional(),
    actorId: z.uuid().optional(),
    startDate: isoDate.optional(),
    endDate: isoDate.optional(),
    includeDeparted: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().min(1).max(500).optional(),
  })
  .transform((q) => ({
    ...q,
    startDate: q.startDate ? rangeStart(q.startDate) : undefined,
    endDate: q.endDate ? rangeEnd(q.endDate) : undefined,
  }))
  .refine(rangeInOrder, RANGE_OUT_OF_ORDER);

export function auditLogRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>().get('/', async (c) => {
    const principal = c.get('principal');
    const q = queryParams(c, auditLogQuery);
    if (principal.type !== 'personal') {
      // A workspace key elsewhere hears that first; in its own workspace, that keys are not people.
      await authorizeWorkspace(db, principal, q.workspaceId, 'read');
      throw forbidden('Audit logs need the personal API key of an organization admin or owner');
    }
    // The caller's organization is the workspace's, if the caller belongs to it.
    const workspace = await findWorkspace(db, q.workspaceId);
    const membership = workspace && (await activeMembership(db, workspace.organization_id, principal.userId));
    // Another organization's workspace is answered as a missing one: nothing about it is told.
    if (!workspace || !membership) throw notFound('Workspace');
    if (!workspace.allow_personal_api_keys) {
      throw forbidden('Personal API keys are disabled in this workspace; use a workspace key');
    }
    if (membership.role !== 'owner' && membership.role !== 'admin') {
      throw forbidden('Audit logs need an organization admin or owner role');
    }
    const { plan } = await effectiveLimits(db, workspace.organization_id);
    if (plan !== 'enterprise') throw forbidden('Audit logs need an Enterprise plan');
    if (q.actorId) {
      const actor = await findMembership(db, workspace.organization_id, q.actorId);
      if (!actor || (actor.departedAt && !q.includeDeparted)) {
        throw invalidField(
          'actorId',
          actor ? 'Former member: set includeDeparted=true' : 'Not a member of the organization',
        );
      }
    }
    const page = await listAuditLogs(db, { ...q, organizationId: workspace.organization_id });
    return c.json(page);
  });
}
