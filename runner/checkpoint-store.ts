// The checkpoint store of one attempt at an execution (runner/executor/checkpoints.ts): what earlier
// attempts recorded, read once at the claim (a first attempt has nothing to read: no round trip), and
// the attempt's own checkpoints, written through the runner's group commit.
import type { Queryable } from '../db/client.ts';
import { type CheckpointRow, loadCheckpoints } from '../db/execution-checkpoints.ts';
import type { Checkpoint, CheckpointStore } from './executor/checkpoints.ts';

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
  };
}
