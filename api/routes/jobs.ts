// GET /api/jobs/{jobId}: the state of an execution, as the spec's Job record. `output` is present
// only when completed; a failed job carries its error.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeResource } from '../../db/access.ts';
import { notFound } from '../../db/errors.ts';
import { type ExecutionRow, getExecution } from '../../db/executions.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';

export function jobRecord(row: ExecutionRow | null, id: string) {
  if (!row) return { taskId: id, status: 'queued' };
  return {
    taskId: row.id,
    status: row.status,
    ...(row.status === 'completed' ? { output: row.output } : {}),
    ...(row.status === 'failed' ? { error: row.error } : {}),
    metadata: {
      // A job not yet started reports when it was queued.
      startTime: (row.started_at ?? row.created_at).toISOString(),
      ...(row.ended_at ? { endTime: row.ended_at.toISOString() } : {}),
      ...(row.started_at && row.ended_at
        ? { duration: row.ended_at.getTime() - row.started_at.getTime() }
        : {}),
      createdAt: row.created_at.toISOString(),
      workflowId: row.workflow_id,
      mode: row.mode,
      trigger: row.trigger,
    },
  };
}

export function jobRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>().get('/:jobId', async (c) => {
    const id = c.req.param('jobId');
    const row = z.uuid().safeParse(id).success ? await getExecution(db, id) : null;
    if (!row) throw notFound('Job');
    await authorizeResource(db, c.get('principal'), row.workspace_id, 'read', 'Job');
    return c.json({ success: row.status !== 'failed', ...jobRecord(row, id) });
  });
}
