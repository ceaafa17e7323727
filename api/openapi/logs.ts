// OpenAPI: GET /api/v1/logs (19) and GET /api/v1/logs/{id} (18), a workspace's execution log, and
// GET /api/v1/audit-logs (20), an organization's audit trail.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { AuditLogEntry } from '../../db/audit-logs.ts';
import type { LogEntry, LogEntryDetail } from '../../db/execution-logs.ts';
import { auditLogQuery } from '../routes/audit-logs.ts';
import { logListQuery } from '../routes/logs.ts';
import {
  API_RATE_LIMITED,
  annotateFields,
  cursorParam,
  EX,
  errors,
  invalid,
  ok,
  READ_DENIED,
} from './components.ts';

// --- Answers --------------------------------------------------------------------------------------

const entryFields = {
  id: z.uuid().meta({ description: 'The log entry id' }),
  workflowId: z.uuid(),
  executionId: z.uuid(),
  level: z.enum(['info', 'error']).meta({ description: '`error` when the execution failed' }),
  trigger: z.string().meta({ description: 'What started it, e.g. `api`' }),
  totalDurationMs: z.number().int(),
  startedAt: z.iso.datetime(),
  endedAt: z.iso.datetime(),
  createdAt: z.iso.datetime(),
};

const logEntrySchema = z
  .object({ ...entryFields, cost: z.object({ total: z.number().meta({ description: 'Dollars' }) }) })
  .meta({ id: 'LogEntry' }) satisfies z.ZodType<LogEntry>;

const tokens = z.object({ prompt: z.number().int(), completion: z.number().int(), total: z.number().int() });

const traceSpan = z
  .looseObject({
    blockId: z.string(),
    type: z.string().meta({ description: 'The block type' }),
    iteration: z.number().int().optional().meta({ description: 'Inside loop and parallel bodies' }),
    parent: z.string().optional().meta({ description: 'The loop or parallel block it ran in' }),
    status: z.enum(['success', 'error']),
    startedAt: z.iso.datetime(),
    endedAt: z.iso.datetime(),
    durationMs: z.number().int(),
    input: z.unknown().optional(),
    output: z.unknown().optional(),
    error: z.string().optional(),
    cost: z.number().optional(),
    logs: z.array(z.string()).optional().meta({ description: 'What function code wrote to the console' }),
    children: z.array(z.unknown()).optional().meta({ description: 'The spans of a child workflow' }),
  })
  .meta({ id: 'TraceSpan', description: 'One block run; large values are cut' });

const logDetailSchema = z
  .object({
    ...entryFields,
    cost: z.object({
      total: z.number(),
      base: z.number().meta({ description: 'The flat charge per execution' }),
      tokens,
      models: z.record(
        z.string(),
        z.object({ input: z.number(), output: z.number(), total: z.number(), tokens }),
      ),
    }),
    workflow: z.object({ id: z.uuid(), name: z.string(), description: z.string() }),
    executionData: z.object({
      traceSpans: z.array(traceSpan),
      finalOutput: z.unknown().optional().meta({ description: 'Present only when the execution completed' }),
      error: z.string().nullable().optional().meta({ description: 'Present only when the execution failed' }),
      inputs: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'LogEntryDetail' }) satisfies z.ZodType<LogEntryDetail>;

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

const entryExample = {
  id: EX.logId,
  workflowId: EX.workflowId,
  executionId: EX.executionId,
  level: 'info',
  trigger: 'api',
  totalDurationMs: 48,
  startedAt: EX.time,
  endedAt: '2026-01-15T09:30:00.048Z',
  createdAt: '2026-01-15T09:29:59.990Z',
};
const detailExample = {
  ...entryExample,
  cost: { total: 0.005, base: 0.005, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
  workflow: { id: EX.workflowId, name: 'greet', description: 'Says hello' },
  executionData: {
    traceSpans: [
      {
        blockId: 'greet',
        type: 'function',
        status: 'success',
        startedAt: EX.time,
        endedAt: '2026-01-15T09:30:00.031Z',
        durationMs: 31,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: function code, as the workflow holds it
        input: { code: 'return { message: `Hello, ${inputs.name}!` }' },
        output: { message: 'Hello, Ada!' },
      },
    ],
    finalOutput: { message: 'Hello, Ada!' },
    inputs: { name: 'Ada' },
  },
};
const NEXT_CURSOR = 'eyJ0IjoiMjAyNi0wMS0xNVQwOTozMDowMC4wMDAwMDBaIiwiaWQiOiI0ZjdjNmRhZSJ9';

// --- Requests -------------------------------------------------------------------------------------

const WORKSPACE = { description: 'The workspace whose log to read', example: EX.workspaceId };
const DATE = 'ISO 8601 date or date-time (inclusive; a bare date as the end means the whole day)';

annotateFields(logListQuery, {
  workspaceId: WORKSPACE,
  workflowIds: { description: 'Comma-separated workflow ids', example: EX.workflowId },
  level: { description: '`error`: failed executions; `info`: the others', example: 'error' },
  triggers: { description: 'Comma-separated triggers, e.g. `api`', example: 'api' },
  startDate: { description: `On startedAt; ${DATE}`, example: '2026-01-01' },
  endDate: { description: `On startedAt; ${DATE}`, example: '2026-01-31' },
  executionId: { description: 'One execution', example: EX.executionId },
  minDurationMs: { description: 'Milliseconds', example: 10 },
  maxDurationMs: { description: 'Milliseconds', example: 60000 },
  details: { description: '`full`: list entries with the detail fields', example: 'basic' },
  limit: { description: 'Entries per page', example: 20 },
  cursor: { description: cursorParam, example: NEXT_CURSOR },
});

annotateFields(auditLogQuery, {
  workspaceId: { description: "A workspace of the caller's organization", example: EX.workspaceId },
  action: { description: 'e.g. workflow.created', example: 'workspace.created' },
  resourceType: { description: 'e.g. workflow', example: 'workspace' },
  resourceId: { description: 'One resource', example: EX.workspaceId },
  actorId: {
    description: 'A member (or, with includeDeparted, former member) of the organization',
    example: EX.userId,
  },
  startDate: { description: DATE, example: '2026-01-01' },
  endDate: { description: DATE, example: '2026-01-31' },
  includeDeparted: { description: 'Include entries of people who left the organization', example: 'false' },
  limit: { description: 'Entries per page', example: 20 },
  cursor: { description: cursorParam, example: NEXT_CURSOR },
});

const READ_400 = invalid(['workspaceId'], 'Invalid UUID', 'invalid_format', 'Invalid query parameters');

export function registerLogs(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'get',
    path: '/api/v1/logs',
    operationId: 'listLogs',
    tags: ['Logs'],
    summary: 'List logs',
    description:
      "A workspace's execution log: one entry per finished execution, newest first, filtered and " +
      'cursor-paged (`nextCursor` is absent on the last page). Read access to the workspace is enough.',
    request: { query: logListQuery },
    responses: {
      200: ok(
        {
          description: 'A page of entries (with the detail fields when details=full)',
          schema: z
            .object({
              data: z.union([z.array(logEntrySchema), z.array(logDetailSchema)]),
              nextCursor: z.string().optional().meta({ description: 'Absent on the last page' }),
            })
            .meta({ id: 'LogPage' }),
          examples: {
            basic: {
              summary: 'details=basic',
              value: { data: [{ ...entryExample, cost: { total: 0.005 } }], nextCursor: NEXT_CURSOR },
            },
            full: { summary: 'details=full, last page', value: { data: [detailExample] } },
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [
            {
              error: 'Invalid query parameters',
              details: [
                {
                  code: 'invalid_value',
                  path: ['level'],
                  message: 'Invalid option: expected one of "info"|"error"',
                },
              ],
            },
            invalid(['cursor'], 'Not a cursor returned by this endpoint'),
            READ_400,
          ],
          403: READ_DENIED,
          404: 'Workspace not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/logs/{id}',
    operationId: 'getLog',
    tags: ['Logs'],
    summary: 'Get log details',
    description:
      'One entry with its workflow, execution data (trace spans, output or error, inputs) and cost.',
    request: {
      params: z.object({ id: z.uuid().meta({ description: 'The log entry id', example: EX.logId }) }),
    },
    responses: {
      200: ok(
        {
          description: 'The entry',
          schema: z.object({ data: logDetailSchema }).meta({ id: 'LogDetail' }),
          example: { data: detailExample },
        },
        'api',
      ),
      ...errors(
        {
          400: invalid(['id'], 'Must be a UUID', 'invalid_format'),
          403: 'Personal API keys are disabled in this workspace; use a workspace key',
          404: 'Log entry not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/audit-logs',
    operationId: 'listAuditLogs',
    tags: ['Logs'],
    summary: 'List audit logs',
    description:
      'The entries of the workspace and the organization-level ones, newest first. Needs the personal key ' +
      'of an organization admin or owner, on the Enterprise plan. `nextCursor` is null on the last page.',
    request: { query: auditLogQuery },
    responses: {
      200: ok(
        {
          description: 'A page of entries',
          schema: z
            .object({ data: z.array(auditEntrySchema), nextCursor: z.string().nullable() })
            .meta({ id: 'AuditLogPage' }),
          example: {
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
          },
        },
        'api',
      ),
      ...errors(
        {
          400: [invalid(['actorId'], 'Not a member of the organization'), READ_400],
          403: [
            'Audit logs need an Enterprise plan',
            'Audit logs need an organization admin or owner role',
            'Audit logs need the personal API key of an organization admin or owner',
            'Personal API keys are disabled in this workspace; use a workspace key',
            'This workspace key belongs to another workspace',
          ],
          404: 'Workspace not found',
          429: API_RATE_LIMITED,
        },
        { metering: 'api' },
      ),
    },
  });
}
