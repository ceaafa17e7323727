// GET /api/v1/audit-logs (20): an organization's audit trail, for its admins and owners on Enterprise;
// GET /api/v1/audit-logs/{id}: one entry of it, for the same people.
import { createRoute } from '@hono/zod-openapi';
import { authorizeWorkspace } from '../../../db/access.ts';
import { getAuditLog, listAuditLogs } from '../../../db/audit-logs.ts';
import { activeMembership, findMembership } from '../../../db/members.ts';
import { effectiveLimits } from '../../../db/plans.ts';
import { findWorkspace } from '../../../db/workspaces.ts';
import { forbidden, invalidField, notFound } from '../../../errors.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import {
  auditLogDenied,
  auditLogDetailExample,
  auditLogPageExample,
  auditLogsDenied,
  getAuditLogInvalid,
  listAuditLogsInvalid,
} from './examples.ts';
import { auditLogDetail, auditLogPage, auditLogParams, auditLogQuery } from './schemas.ts';

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

export const getAuditLogRoute = createRoute({
  method: 'get',
  path: '/api/v1/audit-logs/{id}',
  operationId: 'getAuditLog',
  scope: 'audit:read' as const,
  tags: ['Logs'],
  summary: 'Get an audit log entry',
  description:
    "One entry of the caller's organization (of any of its workspaces, or organization-level), former " +
    "members' included. Needs the personal key of an organization admin or owner, on the Enterprise plan; " +
    'an entry of another organization is not found.',
  request: { params: auditLogParams },
  responses: {
    200: ok({ description: 'The entry', schema: auditLogDetail, example: auditLogDetailExample }, 'api'),
    ...errors(
      {
        400: getAuditLogInvalid,
        403: auditLogDenied,
        404: 'Audit log entry not found',
        429: API_RATE_LIMITED,
      },
      { metering: 'api' },
    ),
  },
});

export function auditLogRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(listAuditLogsRoute, async (c) => {
      const principal = c.get('principal');
      const q = c.req.valid('query');
      if (principal.type !== 'personal') {
        // A workspace key elsewhere hears that first; in its own workspace, that keys are not people.
        await authorizeWorkspace(db, principal, q.workspaceId, 'read');
        throw forbidden('Audit logs need the personal API key of an organization admin or owner');
      }
      // The caller's organization is the workspace's, if the caller belongs to it.
      const workspace = await findWorkspace(db, q.workspaceId);
      const membership =
        workspace && (await activeMembership(db, workspace.organization_id, principal.userId));
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
    })
    .openapi(getAuditLogRoute, async (c) => {
      const principal = c.get('principal');
      const { id } = c.req.valid('param');
      // A workspace key is refused whatever the id: it learns nothing of any entry.
      if (principal.type !== 'personal') {
        throw forbidden('Audit logs need the personal API key of an organization admin or owner');
      }
      const found = await getAuditLog(db, id);
      const membership = found && (await activeMembership(db, found.organizationId, principal.userId));
      // Another organization's entry is answered as a missing one.
      if (!found || !membership) throw notFound('Audit log entry');
      if (membership.role !== 'owner' && membership.role !== 'admin') {
        throw forbidden('Audit logs need an organization admin or owner role');
      }
      const { plan } = await effectiveLimits(db, found.organizationId);
      if (plan !== 'enterprise') throw forbidden('Audit logs need an Enterprise plan');
      // An entry of a workspace that refuses personal keys is refused as the list there would be.
      const workspaceId = found.entry.workspaceId;
      const workspace = workspaceId ? await findWorkspace(db, workspaceId) : null;
      if (workspace && !workspace.allow_personal_api_keys) {
        throw forbidden('Personal API keys are disabled in this workspace; use a workspace key');
      }
      return c.json({ data: found.entry }, 200);
    }).app;
}
