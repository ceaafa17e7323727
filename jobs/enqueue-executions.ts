// Admits and enqueues executions: executions requested together are judged against their spend
// and rate limits, inserted, audited and sent to the runners together, in one transaction per
// batch. Tokens and spend are judged inside it, so a refused or rolled-back request costs nothing
// and an admitted one always exists with its job.
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Actor } from '../db/audit-logs.ts';
import { recordAudits } from '../db/audit-logs.ts';
import { createBatcher } from '../db/batcher.ts';
import { COMMIT_WITHOUT_FLUSH, type Db, type Queryable } from '../db/client.ts';
import { insertExecutions, type NewExecution } from '../db/executions.ts';
import { type Admission, admitExecutions, admitUnmetered, type BillingContext } from '../db/usage.ts';
import { sendInTransaction } from './boss.ts';
import { QUEUES } from './queues.ts';

export interface EnqueuerDeps {
  db: Db;
  config: Config;
  queue: PgBoss;
  /** Now, for rate limits and billing periods. */
  clock: () => Date;
}

export interface ExecutionRequest {
  execution: NewExecution;
  ctx: BillingContext;
  actor: Actor;
  /**
   * False for runs an operator starts by hand (admin `executions.run`): they take no rate-limit
   * token and are not refused at the spend limit; their cost is still recorded.
   */
  metered?: boolean;
}

export interface Enqueued {
  admission: Admission;
  /** When the execution was queued; null when it was refused. */
  createdAt: Date | null;
}

/** Judges the metered requests in one statement and lets the others pass, answering in order. */
async function admit(
  tx: Queryable,
  requests: ExecutionRequest[],
  now: Date,
  billingEnabled: boolean,
): Promise<Admission[]> {
  const ask = (r: ExecutionRequest) => ({ ctx: r.ctx, mode: r.execution.mode });
  const metered = billingEnabled ? requests.filter((r) => r.metered !== false) : [];
  const judged = metered.length ? await admitExecutions(tx, metered.map(ask), now) : [];
  const verdicts = new Map(metered.map((r, i) => [r, judged[i] as Admission]));
  return requests.map((r) => verdicts.get(r) ?? (admitUnmetered([ask(r)], now)[0] as Admission));
}

export function executionEnqueuer({
  db,
  config,
  queue,
  clock,
}: EnqueuerDeps): (request: ExecutionRequest) => Promise<Enqueued> {
  return createBatcher((requests: ExecutionRequest[]) =>
    db.transaction(async (tx) => {
      const now = clock();
      const admissions = await admit(tx, requests, now, config.BILLING_ENABLED);
      const admitted = requests.filter((_, i) => admissions[i]?.admitted);
      const executions = admitted.map((r) => r.execution);
      // A sync caller hears of its execution only after the durable commit of its end or, still
      // running when the wait ends, after a read that makes this commit durable
      // (getExecutionDurably): so only a batch of sync executions need not wait for the disk.
      const unannounced = executions.length > 0 && executions.every((e) => e.mode === 'sync');
      // Independent statements of one transaction: sent together, answered in one round trip.
      const [created] = await Promise.all([
        executions.length ? insertExecutions(tx, executions) : new Map<string, Date>(),
        recordAudits(
          tx,
          admitted.map(({ actor, execution: e }) => ({
            actor,
            organizationId: e.organizationId,
            workspaceId: e.workspaceId,
            action: 'workflow.execute' as const,
            resourceType: 'workflow',
            resourceId: e.workflowId,
            metadata: { executionId: e.id, mode: e.mode, trigger: e.trigger },
          })),
        ),
        sendInTransaction(
          queue,
          tx,
          QUEUES.workflowExecute,
          executions.map((e) => ({
            id: e.id,
            data: e.concurrency ? { executionId: e.id, limited: true } : { executionId: e.id },
            heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
          })),
        ),
        unannounced ? tx.query(COMMIT_WITHOUT_FLUSH.text) : undefined,
      ]);
      return requests.map((r, i) => ({
        admission: admissions[i] as Admission,
        createdAt: created.get(r.execution.id) ?? null,
      }));
    }),
  );
}
