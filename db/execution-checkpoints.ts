// Checkpoints of finished blocks (see runner/executor/checkpoints.ts): written by the attempt that
// holds its execution (a runner that lost it to another attempt writes nothing), read back by the
// attempt that takes over after a crash.
import type { Queryable, Statement } from './client.ts';

export interface CheckpointRow {
  executionId: string;
  attempt: number;
  key: string;
  /** The block's output, spans and cost, as JSON. */
  record: unknown;
}

/**
 * Records checkpoints whose attempt still holds its processing execution, all in one statement;
 * a key recorded already keeps its first record. Answers `execution_id` and `key` of each one kept.
 */
export function saveCheckpointsStatement(rows: CheckpointRow[]): Statement {
  return {
    text: `insert into execution_checkpoints (execution_id, key, attempt, record)
      select t.execution_id, t.key, t.attempt, t.record
        from jsonb_to_recordset($1::jsonb) as t(execution_id uuid, key text, attempt int, record jsonb)
        join executions e on e.id = t.execution_id and e.attempt = t.attempt and e.status = 'processing'
      on conflict (execution_id, key) do nothing
      returning execution_id, key`,
    params: [
      JSON.stringify(
        rows.map((r) => ({ execution_id: r.executionId, key: r.key, attempt: r.attempt, record: r.record })),
      ),
    ],
  };
}

/** The checkpoints earlier attempts recorded for an execution, by key. */
export async function loadCheckpoints(db: Queryable, executionId: string): Promise<Map<string, unknown>> {
  const rows = await db.query<{ key: string; record: unknown }>(
    'select key, record from execution_checkpoints where execution_id = $1',
    [executionId],
  );
  return new Map(rows.map((r) => [r.key, r.record]));
}

/**
 * Records one checkpoint inside the transaction `tx` that made the block's writes, when its attempt
 * still holds its processing execution; answers whether it was recorded. The execution's row is
 * share-locked: a claim by another attempt waits for this transaction (and then reads its checkpoint)
 * or has committed already (and then nothing is recorded: the caller rolls its writes back).
 */
export async function saveCheckpointIn(tx: Queryable, row: CheckpointRow): Promise<boolean> {
  const kept = await tx.query(
    `insert into execution_checkpoints (execution_id, key, attempt, record)
      select e.id, $2, e.attempt, $4::jsonb from executions e
       where e.id = $1 and e.attempt = $3 and e.status = 'processing'
       for share
      on conflict (execution_id, key) do nothing
      returning key`,
    [row.executionId, row.key, row.attempt, JSON.stringify(row.record)],
  );
  return kept.length === 1;
}
