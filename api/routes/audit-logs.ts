// GET /api/v1/audit-logs: an organization's audit trail, for its admins and owners on Enterprise.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeWorkspace } from '../../db/access.ts';
import { listAuditLogs } from '../../db/audit-logs.ts';
import { forbidden, invalidField } from '../../db/errors.ts';
import { activeMembership, findMembership } from '../../db/members.ts';
import { effectiveLimits } from '../../db/plans.ts';
import { findWorkspace } from '../../db/workspaces.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { queryParams } from '../middleware/validate.ts';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The instant an ISO date or date-time names, or null. Without an offset it is UTC, not the server's
 * zone. Date.parse rolls impossible days over (Feb 30 is Mar 1), so the day must read back as
 * written; and the instant must lie in years 1 to 9999, which Postgres reads as we write them.
 */
function toInstant(v: string): Date | null {
  const m = ISO_DATE.exec(v);
  const day = m?.[1];
  if (!m || !day) return null;
  const midnight = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== day) return null;
  const t = Date.parse(m[2] && !m[5] ? `${v}Z` : v);
  return Number.isNaN(t) || t < FIRST_INSTANT || t > LAST_INSTANT ? null : new Date(t);
}

const isoDate = z
  .string()
  .regex(ISO_DATE, 'Must be an ISO 8601 date or date-time')
  .refine((v) => toInstant(v) !== null, 'Not a valid date');

export const auditLogQuery = z
  .object({
    workspaceId: z.uuid(),
    action: z.string().min(1).max(100).optional(),
    resourceType: z.string().min(1).max(100).optional(),
    resourceId: z.string().min(1).max(200).optional(),
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
    startDate: q.startDate ? (toInstant(q.startDate) as Date) : undefined,
    // A bare date as the end of a range means the whole of that day.
    endDate: q.endDate
      ? (toInstant(DATE_ONLY.test(q.endDate) ? `${q.endDate}T23:59:59.999Z` : q.endDate) as Date)
      : undefined,
  }))
  .refine((q) => !q.startDate || !q.endDate || q.startDate <= q.endDate, {
    path: ['endDate'],
    message: 'endDate must not be before startDate',
  });

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
    if (!workspace || !membership) throw invalidField('workspaceId', 'Not a workspace of your organization');
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
