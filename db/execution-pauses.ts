// Paused executions (an `approval` block waiting for a person; runner/blocks/approval.ts): the row is
// `paused`, held by no runner, with `pause` saying what it waits for and `resume_at` its timeout.
// A resume locks the row, records the answer as the approval block's checkpoint and turns the row
// back to `processing` in one transaction: of two racing resumes (or a resume racing the timeout's
// sweep, db/execution-parks.ts) the first to lock the row wins; the other finds it no longer paused.
import type { Queryable } from './client.ts';
import type { ExecutionRow, StoredPause } from './executions.ts';

/** The execution locked for a resume (or null when there is none). */
export async function lockForResume(tx: Queryable, id: string): Promise<ExecutionRow | null> {
  const [row] = await tx.query<ExecutionRow>('select * from executions where id = $1 for update', [id]);
  return row ?? null;
}

/**
 * Records the answer to the pause `contextId` of a locked paused execution: the approval block's
 * checkpoint becomes its output (`record`), the row turns `processing` (or `queued`, in a concurrency
 * group: its pause gave up its slot, and it claims one again as a parked execution does,
 * db/execution-parks.ts). Null when it is no longer paused at that context (nothing changed).
 * Answers whether the workflow has a concurrency limit, and the status it turned.
 */
export async function resumePaused(
  tx: Queryable,
  row: ExecutionRow & { pause: StoredPause },
  record: unknown,
): Promise<{ limited: boolean; status: 'processing' | 'queued' } | null> {
  const [resumed] = await tx.query<{ limited: boolean; status: 'processing' | 'queued' }>(
    `update executions
        set resume_at = null, pause = null,
            status = case when concurrency_group is null then 'processing' else 'queued' end
      where id = $1 and status = 'paused' and pause->>'contextId' = $2
      returning concurrency_group is not null as limited, status`,
    [row.id, row.pause.contextId],
  );
  if (!resumed) return null;
  await tx.query(
    `insert into execution_checkpoints (execution_id, key, attempt, record) values ($1, $2, $3, $4::jsonb)
     on conflict (execution_id, key) do update set record = excluded.record, attempt = excluded.attempt`,
    [row.id, row.pause.blockId, row.attempt, JSON.stringify(record)],
  );
  return resumed;
}

/** A paused execution in a listing. */
export interface PausedExecution {
  id: string;
  workflowId: string;
  createdAt: string;
  pause: StoredPause;
}

/** A workflow's paused executions, oldest pause first (at most `limit`). */
export async function listPaused(
  db: Queryable,
  workflowId: string,
  limit: number,
): Promise<PausedExecution[]> {
  const rows = await db.query<{ id: string; workflow_id: string; created_at: Date; pause: StoredPause }>(
    `select id, workflow_id, created_at, pause from executions
      where workflow_id = $1 and status = 'paused' and pause is not null
      order by created_at, id limit $2`,
    [workflowId, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    workflowId: r.workflow_id,
    createdAt: r.created_at.toISOString(),
    pause: r.pause,
  }));
}
