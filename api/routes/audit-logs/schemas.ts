// The requests and answers of GET /api/v1/audit-logs (an organization's audit trail) and
// GET /api/v1/audit-logs/{id} (one entry).
import { z } from 'zod';
import type { AuditLogEntry } from '../../../db/audit-logs.ts';
import { isStorableText } from '../../../db/tables/values.ts';
import { cursorParam, EX } from '../../openapi/components.ts';
import { isoDate, RANGE_OUT_OF_ORDER, rangeEnd, rangeInOrder, rangeStart } from '../../query-dates.ts';
import { NEXT_CURSOR } from '../logs/examples.ts';
import { DATE_PARAM } from '../logs/schemas.ts';
import { uuidParam } from '../router.ts';

// Compared with Postgres text, which holds no NUL: refused as a 400 rather than failing as a 500.
const filterText = (max: number) => z.string().min(1).max(max).refine(isStorableText, 'Not storable text');

export const auditLogQuery = z
  .object({
    workspaceId: z
      .uuid()
      .meta({ description: "A workspace of the caller's organization", example: EX.workspaceId }),
    action: filterText(100)
      .optional()
      .meta({ description: 'e.g. workflow.created', example: 'workspace.created' }),
    resourceType: filterText(100).optional().meta({ description: 'e.g. workflow', example: 'workspace' }),
    resourceId: filterText(200).optional().meta({ description: 'One resource', example: EX.workspaceId }),
    actorId: z.uuid().optional().meta({
      description: 'A member (or, with includeDeparted, former member) of the organization',
      example: EX.userId,
    }),
    startDate: isoDate.optional().meta({ description: DATE_PARAM, example: '2026-01-01' }),
    endDate: isoDate.optional().meta({ description: DATE_PARAM, example: '2026-01-31' }),
    includeDeparted: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .meta({ description: 'Include entries of people who left the organization', example: 'false' }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(50)
      .meta({ description: 'Entries per page', example: 20 }),
    cursor: z.string().min(1).max(500).optional().meta({ description: cursorParam, example: NEXT_CURSOR }),
  })
  .transform((q) => ({
    ...q,
    startDate: q.startDate ? rangeStart(q.startDate) : undefined,
    endDate: q.endDate ? rangeEnd(q.endDate) : undefined,
  }))
  .refine(rangeInOrder, RANGE_OUT_OF_ORDER);

const auditEntrySchema = z
  .object({
    id: z.uuid(),
    action: z.string().meta({ description: '`<resource>.<verb>`, e.g. workflow.created, workflow.execute' }),
    actorId: z.uuid().nullable().meta({ description: 'null for the admin plane and workspace keys' }),
    actorName: z.string().nullable(),
    actorEmail: z.string().nullable(),
    resourceType: z.string().meta({ description: 'e.g. workflow, workspace, member' }),
    resourceId: z.string().nullable(),
    workspaceId: z.uuid().nullable().meta({ description: 'null for organization-level entries' }),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AuditLogEntry' }) satisfies z.ZodType<AuditLogEntry>;

export const auditLogPage = z
  .object({ data: z.array(auditEntrySchema), nextCursor: z.string().nullable() })
  .meta({ id: 'AuditLogPage' });

export const auditLogParams = z.object({ id: uuidParam('The audit log entry id', EX.auditLogId) });

export const auditLogDetail = z.object({ data: auditEntrySchema }).meta({ id: 'AuditLogDetail' });
