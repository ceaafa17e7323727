// Examples of GET /api/v1/audit-logs: a page, and the errors it gives.
import { EX } from '../../openapi/components.ts';
import { invalid } from '../../openapi/error-answers.ts';
import { READ_400 } from '../logs/examples.ts';

export const auditLogPageExample = {
  data: [
    {
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
    },
  ],
  nextCursor: null,
};

export const listAuditLogsInvalid = [invalid(['actorId'], 'Not a member of the organization'), READ_400];

export const auditLogsDenied = [
  'Audit logs need an Enterprise plan',
  'Audit logs need an organization admin or owner role',
  'Audit logs need the personal API key of an organization admin or owner',
  'Personal API keys are disabled in this workspace; use a workspace key',
  'This workspace key belongs to another workspace',
];
