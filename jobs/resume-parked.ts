// Resumes parked executions that are due (db/execution-parks.ts): each is taken and sent a new job in
// one transaction, so a due execution is enqueued once however many runners sweep at the same time,
// and never lost (a crash before the commit leaves it parked for the next sweep).
import type { PgBoss } from 'pg-boss';
import type { Db } from '../db/client.ts';
import { takeDueExecutions } from '../db/execution-parks.ts';
import { sendInTransaction } from './boss.ts';
import { QUEUES } from './queues.ts';

/** How many due executions one sweep resumes; the next sweep takes the rest. */
const SWEEP_BATCH = 100;

/** Resumes the executions due at `now`; resolves to how many. */
export async function resumeDueExecutions(
  db: Db,
  boss: PgBoss,
  now: Date,
  heartbeatSeconds?: number,
): Promise<number> {
  return db.transaction(async (tx) => {
    const due = await takeDueExecutions(tx, now, SWEEP_BATCH);
    // A new job id: the execution's earlier jobs may still be stored.
    await sendInTransaction(
      boss,
      tx,
      QUEUES.workflowExecute,
      due.map((d) => ({
        id: crypto.randomUUID(),
        data: { executionId: d.id, ...(d.limited ? { limited: true } : {}) },
        ...(heartbeatSeconds ? { heartbeatSeconds } : {}),
      })),
    );
    return due.length;
  });
}
