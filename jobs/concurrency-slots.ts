// The hand-over of concurrency slots (db/execution-concurrency.ts): whatever ends limited executions
// (a runner recording results, the dead-letter handler, a cancel) sends, in its own transaction, a job
// to each waiting execution the freed slots now let in, so the end and the hand-over commit together.
import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../db/client.ts';
import { releaseWaiting } from '../db/execution-concurrency.ts';
import { sendInTransaction } from './boss.ts';
import { QUEUES } from './queues.ts';

/** Call with the groups of `endedIds` locked (lockGroups) in `tx`. Executions without a group: no-op. */
export async function releaseSlots(
  boss: PgBoss,
  tx: Queryable,
  endedIds: string[],
  heartbeatSeconds?: number,
): Promise<void> {
  const next = await releaseWaiting(tx, endedIds);
  // A new job id: the execution's first job (whose id is the execution's) may still be stored.
  await sendInTransaction(
    boss,
    tx,
    QUEUES.workflowExecute,
    next.map((executionId) => ({
      id: crypto.randomUUID(),
      data: { executionId, limited: true },
      ...(heartbeatSeconds ? { heartbeatSeconds } : {}),
    })),
  );
}
