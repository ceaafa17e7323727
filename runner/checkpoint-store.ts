// The checkpoint store of one attempt at an execution (runner/executor/checkpoints.ts): what earlier
// attempts recorded, read once at the claim (a first attempt has nothing to read: no round trip), and
// the attempt's own checkpoints, written through the runner's group commit, or in the transaction of
// a block's own writes to this database (saveWith).
import type { Queryable } from '../db/client.ts';
import { type CheckpointRow, loadCheckpoints, saveCheckpointIn } from '../db/execution-checkpoints.ts';
import type { Checkpoint, CheckpointStore } from './executor/checkpoints.ts';
import { holdPoint } from './hold-points.ts';

export async function checkpointStore(
  db: Queryable,
  executionId: string,
  attempt: number,
  save: (row: CheckpointRow) => Promise<void>,
): Promise<CheckpointStore> {
  const saved = attempt > 1 ? await loadCheckpoints(db, executionId) : new Map<string, unknown>();
  return {
    get: (key) => saved.get(key) as Checkpoint | undefined,
    save: (key, record) => save({ executionId, attempt, key, record }),
    async saveWith(key, work) {
      const result = await db.transaction(async (tx) => {
        const done = await work(tx);
        await holdPoint('table-written');
        const row = { executionId, attempt, key, record: done.checkpoint };
        // Another attempt took the execution over: it will run the block, so these writes must not hold.
        if (!(await saveCheckpointIn(tx, row)))
          throw new Error("This attempt no longer holds its execution: the block's writes are undone");
        return done.result;
      });
      await holdPoint('table-committed');
      return result;
    },
  };
}
