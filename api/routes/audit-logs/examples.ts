// Examples of GET /api/v1/audit-logs and GET /api/v1/audit-logs/{id}: a page, an entry, and the
// errors they give.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { READ_400 } from '../logs/examples.ts';

const entryExample = {
  id: EX.auditLogId,
  action: 'workspace.created',
  actorId: EX.userId,
  actorName: 'Ada Lovelace',
  actorEmail: 'ada@example.com',
  resourceType: 'workspace',
  resourceId: EX.workspaceId,
  workspaceId: EX.workspaceId,
  metadata: { name: 'Marketing' },
  createdAt: EX.time,
};

export const auditLogPageExample = { data: [entryExample], nextCursor: null };

export const auditLogDetailExample = { data: entryExample };

export const getAuditLogInvalid = invalid(['id'], 'Must be a UUID', 'invalid_format');

export const auditLogDenied = [
  'Audit logs need an Enterprise plan',
  'Audit logs need an organization admin or owner role',
  'Audit logs need the personal API key of an organization admin or owner',
  'Personal API keys are disabled in this workspace; use a workspace key',
];

export const listAuditLogsInvalid = [invalid(['actorId'], 'Not a member of the organization'), READ_400];

export const auditLogsDenied = [
  'Audit logs need an Enterprise plan',
  'Audit logs need an organization admin or owner role',
  'Audit logs need the personal API key of an organization admin or owner',
  'Personal API keys are disabled in this workspace; use a workspace key',
  'This workspace key belongs to another workspace',
];
