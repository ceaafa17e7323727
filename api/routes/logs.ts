// GET /api/v1/logs and GET /api/v1/logs/{id}: a workspace's execution log, one entry per finished
// execution, filtered and cursor-paged; and one entry in full.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeLoadedResource, authorizeWorkspace } from '../../db/access.ts';
import { getExecutionLog, listExecutionLogs } from '../../db/execution-logs.ts';
import { invalidField, notFound } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { queryParams, wholeNumberParam } from '../middleware/validate.ts';
import { isoDate, RANGE_OUT_OF_ORDER, rangeEnd, rangeInOrder, rangeStart } from '../query-dates.ts';

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

export const logListQuery = z
  .object({
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
  })
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

const logId = z.uuid();

export function logRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>()
    .get('/', async (c) => {
      const q = queryParams(c, logListQuery);
      await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      return c.json(await listExecutionLogs(db, q));
    })
    .get('/:id', async (c) => {
      const principal = c.get('principal');
      const id = c.req.param('id');
      if (!logId.safeParse(id).success) throw invalidField('id', 'Must be a UUID', 'invalid_format');
      const found = await getExecutionLog(db, id, principal.type === 'personal' ? principal.userId : null);
      if (!found) throw notFound('Log entry');
      // Out of the caller's reach reads as not found: ids of other workspaces' entries stay unconfirmed.
      authorizeLoadedResource(principal, found.workspace, found.permission, 'read', 'Log entry');
      return c.json({ data: found.entry });
    });
}
