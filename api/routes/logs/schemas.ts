// The requests and answers of GET /api/v1/logs (a workspace's execution log, filtered and
// cursor-paged) and GET /api/v1/logs/{id} (one entry in full).
import { z } from 'zod';
import type { LogEntry, LogEntryDetail } from '../../../db/execution-logs.ts';
import { wholeNumberParam } from '../../middleware/validate.ts';
import { cursorParam, EX, withFieldDocs } from '../../openapi/components.ts';
import { isoDate, RANGE_OUT_OF_ORDER, rangeEnd, rangeInOrder, rangeStart } from '../../query-dates.ts';
import { uuidParam } from '../router.ts';
import { NEXT_CURSOR } from './examples.ts';

// --- Requests -------------------------------------------------------------------------------------

// Durations are stored as a Postgres integer: a larger bound would fail the cast as a 500.
const MAX_INT = 2_147_483_647;

/** A comma-separated list, each item checked on its own (a bad item's issue names its index). */
const commaList = <T extends z.ZodType<string, string>>(item: T, max: number) =>
  z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(z.array(item).min(1).max(max));

// Triggers are an open set ('api' today; 'manual', 'schedule', 'webhook', 'chat' to come): checked
// for shape, not membership, so a filter on a trigger not yet in use is simply empty.
const triggerName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'Not a trigger name');

/** How a date bound of a log or audit-log query is read. */
export const DATE_PARAM =
  'ISO 8601 date or date-time (inclusive; a bare date as the end means the whole day)';

// Documented field by field (whole numbers shown as the integers they stand for), then parsed.
const logListFields = withFieldDocs(
  z.object({
    workspaceId: z.uuid(),
    workflowIds: commaList(z.uuid(), 100).optional(),
    level: z.enum(['info', 'error']).optional(),
    triggers: commaList(triggerName, 20).optional(),
    startDate: isoDate.optional(),
    endDate: isoDate.optional(),
    executionId: z.uuid().optional(),
    minDurationMs: wholeNumberParam(0, MAX_INT).optional(),
    maxDurationMs: wholeNumberParam(0, MAX_INT).optional(),
    details: z.enum(['basic', 'full']).default('basic'),
    limit: wholeNumberParam(1, 1000).default(100),
    cursor: z.string().min(1).max(500).optional(),
  }),
  {
    workspaceId: { description: 'The workspace whose log to read', example: EX.workspaceId },
    workflowIds: { description: 'Comma-separated workflow ids', example: EX.workflowId },
    level: { description: '`error`: failed executions; `info`: the others', example: 'error' },
    triggers: { description: 'Comma-separated triggers, e.g. `api`', example: 'api' },
    startDate: { description: `On startedAt; ${DATE_PARAM}`, example: '2026-01-01' },
    endDate: { description: `On startedAt; ${DATE_PARAM}`, example: '2026-01-31' },
    executionId: { description: 'One execution', example: EX.executionId },
    minDurationMs: { description: 'Milliseconds', example: 10 },
    maxDurationMs: { description: 'Milliseconds', example: 60000 },
    details: { description: '`full`: list entries with the detail fields', example: 'basic' },
    limit: { description: 'Entries per page', example: 20 },
    cursor: { description: cursorParam, example: NEXT_CURSOR },
  },
);

export const logListQuery = logListFields
  .transform((q) => ({
    ...q,
    startDate: q.startDate ? rangeStart(q.startDate) : undefined,
    endDate: q.endDate ? rangeEnd(q.endDate) : undefined,
  }))
  .refine(rangeInOrder, RANGE_OUT_OF_ORDER)
  .refine(
    (q) =>
      q.minDurationMs === undefined || q.maxDurationMs === undefined || q.minDurationMs <= q.maxDurationMs,
    { path: ['maxDurationMs'], message: 'maxDurationMs must not be below minDurationMs' },
  );

export const logParams = z.object({ id: uuidParam('The log entry id', EX.logId) });

export const executionLogParams = z.object({
  executionId: uuidParam('The execution whose log entry to read', EX.executionId),
});

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
    attempt: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Blocks with `retry`: the attempt this span records (1, 2, …)' }),
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

export const logPage = z
  .object({
    data: z.union([z.array(logEntrySchema), z.array(logDetailSchema)]),
    nextCursor: z.string().optional().meta({ description: 'Absent on the last page' }),
  })
  .meta({ id: 'LogPage' });

export const logDetail = z.object({ data: logDetailSchema }).meta({ id: 'LogDetail' });
