// Admits and enqueues executions: executions requested together are judged against their spend
// and rate limits, inserted, audited and sent to the runners together, in one transaction per
// batch. Tokens and spend are judged inside it, so a refused or rolled-back request costs nothing
// and an admitted one always exists with its job.
import type { Actor } from '../db/audit-logs.ts';
import { recordAudits } from '../db/audit-logs.ts';
import { createBatcher } from '../db/batcher.ts';
import { insertExecutions, type NewExecution } from '../db/executions.ts';
import { type Admission, admitExecutions, admitUnmetered, type BillingContext } from '../db/usage.ts';
import { sendInTransaction } from '../runner/boss.ts';
import { QUEUES } from '../runner/queues.ts';
import type { ApiDeps } from './context.ts';

export interface ExecutionRequest {
  execution: NewExecution;
  ctx: BillingContext;
  actor: Actor;
}

export interface Enqueued {
  admission: Admission;
  /** When the execution was queued; null when it was refused. */
  createdAt: Date | null;
}

export function executionEnqueuer({
  db,
  config,
  queue,
  clock,
}: Pick<ApiDeps, 'db' | 'config' | 'queue' | 'clock'>): (request: ExecutionRequest) => Promise<Enqueued> {
  return createBatcher((requests: ExecutionRequest[]) =>
    db.transaction(async (tx) => {
      const now = clock();
      const asks = requests.map((r) => ({ ctx: r.ctx, mode: r.execution.mode }));
      const admissions = config.BILLING_ENABLED
        ? await admitExecutions(tx, asks, now)
        : admitUnmetered(asks, now);
      const admitted = requests.filter((_, i) => admissions[i]?.admitted);
      const executions = admitted.map((r) => r.execution);
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
            data: { executionId: e.id },
            heartbeatSeconds: config.QUEUE_HEARTBEAT_SECONDS,
          })),
        ),
      ]);
      return requests.map((r, i) => ({
        admission: admissions[i] as Admission,
        createdAt: created.get(r.execution.id) ?? null,
      }));
    }),
  );
}
