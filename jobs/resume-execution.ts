// Resumes a paused execution (an `approval` block waiting for a person), for the public API, the
// signed link and the admin plane alike: in one transaction the row is locked, the answer checked
// against the fields the approval asked for, recorded as the block's output (its checkpoint, with
// the pause as its span), the row turned `processing` again, a job sent, and the audit log told who
// approved or rejected. Exactly once: a second resume (or one after the timeout) finds the row no
// longer paused and is answered 409, having changed nothing.
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.ts';
import { type Actor, recordAudit } from '../db/audit-logs.ts';
import type { Db, Queryable } from '../db/client.ts';
import { lockForResume, resumePaused } from '../db/execution-pauses.ts';
import type { ExecutionRow, StoredPause } from '../db/executions.ts';
import { conflict, type FieldIssue, notFound, ServiceError } from '../errors.ts';
import { checkInputs, type InputSpec } from '../runner/executor/inputs.ts';
import { sendInTransaction } from './boss.ts';
import { QUEUES } from './queues.ts';

export interface ResumeRequest {
  workflowId: string;
  executionId: string;
  contextId: string;
  approved: boolean;
  data: Record<string, unknown>;
  /** Who answers, for the audit log. */
  actor: Actor;
  /** Who answers, as the approval's output `by` shows it: `user:<id>`, `key:<id>`, `link` or `admin`. */
  by: string;
  /** Checks the caller may answer for this execution (throws 403/404); runs under the row's lock. */
  authorize?(tx: Queryable, row: ExecutionRow): Promise<void>;
}

export interface Resumed {
  executionId: string;
  workflowId: string;
  /** `queued` when its workflow has a concurrency limit: it waits for a slot (db/execution-pauses.ts). */
  status: 'processing' | 'queued';
  blockId: string;
  approved: boolean;
  data: Record<string, unknown>;
  by: string;
  at: string;
}

export function executionResumer(deps: { db: Db; config: Config; queue: PgBoss; now?: () => Date }) {
  return (request: ResumeRequest): Promise<Resumed> =>
    deps.db.transaction(async (tx) => {
      const row = await lockForResume(tx, request.executionId);
      if (!row || row.workflow_id !== request.workflowId) throw notFound('Execution');
      await request.authorize?.(tx, row);
      if (row.status !== 'paused' || !row.pause)
        throw conflict(`Execution is not paused (${row.status}): there is nothing to answer`);
      const pause = row.pause;
      if (pause.contextId !== request.contextId)
        throw conflict('This pause was answered already: the execution now waits on another one');
      const data = checkAnswer(pause, request.approved, request.data);
      const at = (deps.now?.() ?? new Date()).toISOString();
      const output = { approved: request.approved, data, by: request.by, at, timedOut: false };
      const span = {
        blockId: pause.blockId,
        type: 'approval',
        status: 'success',
        startedAt: pause.pausedAt,
        endedAt: at,
        durationMs: Math.max(0, Date.parse(at) - Date.parse(pause.pausedAt)),
        input: { message: pause.message, fields: pause.fields },
        output,
        logs: [`paused for approval`, `${request.approved ? 'approved' : 'rejected'} by ${request.by}`],
      };
      const resumed = await resumePaused(
        tx,
        { ...row, pause },
        {
          output,
          errored: false,
          spans: [span],
          cost: 0,
          models: {},
        },
      );
      if (!resumed) throw conflict('Execution is no longer paused');
      await sendInTransaction(deps.queue, tx, QUEUES.workflowExecute, [
        {
          id: crypto.randomUUID(),
          data: { executionId: row.id, ...(resumed.limited ? { limited: true } : {}) },
          heartbeatSeconds: deps.config.QUEUE_HEARTBEAT_SECONDS,
        },
      ]);
      await recordAudit(tx, request.actor, {
        organizationId: row.organization_id,
        workspaceId: row.workspace_id,
        action: request.approved ? 'workflow.approve' : 'workflow.reject',
        resourceType: 'workflow',
        resourceId: row.workflow_id,
        metadata: { executionId: row.id, contextId: pause.contextId, blockId: pause.blockId, by: request.by },
      });
      return {
        executionId: row.id,
        workflowId: row.workflow_id,
        status: resumed.status,
        blockId: pause.blockId,
        approved: request.approved,
        data,
        by: request.by,
        at,
      };
    });
}

/**
 * The answer's data checked against the approval's fields: declared fields only, each of its type;
 * required ones (defaults filled in) only on an approval, as a rejection needs no more than itself.
 */
function checkAnswer(
  pause: StoredPause,
  approved: boolean,
  given: Record<string, unknown>,
): Record<string, unknown> {
  const issues: FieldIssue[] = [];
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(pause.fields, name))
      issues.push({
        code: 'unrecognized_keys',
        path: ['data', name],
        message: `"${name}" is not a field of this approval`,
      });
  }
  const spec = Object.fromEntries(
    Object.entries(pause.fields).map(([k, f]) => [
      k,
      { ...f, required: approved && f.required } as InputSpec,
    ]),
  );
  const checked = checkInputs(spec, given, 'data');
  issues.push(...checked.issues);
  if (issues.length) throw new ServiceError(400, 'Invalid resume data', { details: issues });
  return checked.inputs;
}
