// GET /api/jobs/{jobId}: the state of an execution, as the spec's Job record (db/executions.ts
// jobRecord, shared with completion callbacks). `output` is present only when completed; a failed
// job carries its error.
import { Hono } from 'hono';
import { z } from 'zod';
import { authorizeResource } from '../../db/access.ts';
import { getExecution, jobAnswer } from '../../db/executions.ts';
import { notFound } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';

export function jobRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>().get('/:jobId', async (c) => {
    const id = c.req.param('jobId');
    const row = z.uuid().safeParse(id).success ? await getExecution(db, id) : null;
    if (!row) throw notFound('Job');
    await authorizeResource(db, c.get('principal'), row.workspace_id, 'read', 'Job');
    return c.json(jobAnswer(row));
  });
}
