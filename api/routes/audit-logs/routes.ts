// GET /api/v1/audit-logs (20): an organization's audit trail, for its admins and owners on Enterprise.
import { createRoute } from '@hono/zod-openapi';
import { authorizeWorkspace } from '../../../db/access.ts';
import { listAuditLogs } from '../../../db/audit-logs.ts';
import { activeMembership, findMembership } from '../../../db/members.ts';
import { effectiveLimits } from '../../../db/plans.ts';
import { findWorkspace } from '../../../db/workspaces.ts';
import { forbidden, invalidField, notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { auditLogPageExample, auditLogsDenied, listAuditLogsInvalid } from './examples.ts';
import { auditLogPage, auditLogQuery } from './schemas.ts';

export const listAuditLogsRoute = createRoute({
  method: 'get',
  path: '/api/v1/audit-logs',
  operationId: 'listAuditLogs',
  scope: 'audit:read' as const,
  tags: ['Logs'],
  summary: 'List audit logs',
  description:
    'The entries of the workspace and the organization-level ones, newest first. Needs the personal key ' +
    'of an organization admin or owner, on the Enterprise plan. `nextCursor` is null on the last page.',
  request: { query: auditLogQuery },
  responses: {
    200: ok({ description: 'A page of entries', schema: auditLogPage, example: auditLogPageExample }, 'api'),
    ...errors(
      { 400: listAuditLogsInvalid, 403: auditLogsDenied, 404: 'Workspace not found', 429: API_RATE_LIMITED },
      { metering: 'api' },
    ),
  },
});

export function auditLogRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true }).openapi(listAuditLogsRoute, async (c) => {
    const principal = c.get('principal');
    const q = c.req.valid('query');
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
    return c.json(page, 200);
  }).app;
}
