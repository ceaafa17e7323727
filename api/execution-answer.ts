// Answers API callers that execute a workflow (POST /api/workflows/{id}/execute, MCP tool calls):
// jobs/start-execution.ts admits and enqueues; this adds the sync wait, registered before the job
// exists so the runner's notice cannot come too early to be heard, and shapes the reply.
import type { Context } from 'hono';
import { type DoneNotice, getExecution, getExecutionDurably, jobRecord } from '../db/executions.ts';
import type { LimitsObject } from '../db/usage.ts';
import { ServiceError } from '../errors.ts';
import { approvalLinks } from '../jobs/approval-links.ts';
import { executionStarter, type Started, type StartRequest } from '../jobs/start-execution.ts';
import type { ApiDeps } from './context.ts';
import { executionEventStream, SSE_HEADERS } from './execution-stream.ts';
import { rateLimitHeaders } from './middleware/rate-limit.ts';

/** A started execution as the API holds it: with the caller's wait for a sync result. */
export interface StartedCall extends Started {
  /** A sync execution's wait for its result; null for async or refused ones. */
  wait: { done: Promise<DoneNotice | null> } | null;
}

export function executionAnswers(deps: ApiDeps) {
  const { db, config, waiter } = deps;
  const enqueue = executionStarter(deps);
  const links = approvalLinks(config);

  /** Authorises, checks the inputs against the deployed version and enqueues; throws 4xx. */
  async function start(request: Omit<StartRequest, 'executionId'>): Promise<StartedCall> {
    const executionId = crypto.randomUUID();
    // A streamed execution's caller follows its events, not its end notice.
    const wait =
      request.mode === 'sync' && !request.streamOutputs
        ? waiter.wait(executionId, config.SYNC_WAIT_TIMEOUT_MS)
        : null;
    try {
      const started = await enqueue({ ...request, executionId });
      if (!started.admission.admitted) wait?.cancel();
      return { ...started, wait: started.admission.admitted ? wait : null };
    } catch (err) {
      wait?.cancel();
      throw err;
    }
  }

  /**
   * The result of a finished execution read from its row; null while it is not finished, once its
   * enqueueing is on disk (the caller is about to be handed the running execution's job).
   */
  async function finishedRow(id: string): Promise<DoneNotice | null> {
    const row = await getExecutionDurably(db, id);
    if (!row || row.status === 'queued' || row.status === 'processing' || row.status === 'paused')
      return null;
    return {
      id,
      status: row.status,
      output: row.output,
      error: row.error,
      startedAt: (row.started_at ?? row.created_at).toISOString(),
      endedAt: (row.ended_at ?? row.created_at).toISOString(),
    };
  }

  /** Waits for a sync execution's result; null when it is still running after the wait. */
  async function result(started: StartedCall): Promise<DoneNotice | null> {
    const notice = started.wait ? await started.wait.done : null;
    // A parked execution goes on later, maybe days later: the caller gets its job now.
    if (notice?.status === 'parked') return null;
    // The notice carries the result unless it was too large for one; then the row has it.
    if (notice && (notice.status !== 'completed' || 'output' in notice)) return notice;
    return finishedRow(started.executionId);
  }

  /**
   * The answer of an execute call, as the spec shapes it: refused (402/429, with Retry-After), the
   * 202 acknowledgement of an async execution, or a sync execution's result (202 with its job
   * when it outlives the wait). Rate-limit headers go on every one of them.
   */
  function admitted(c: Context, started: StartedCall): LimitsObject {
    const { admission } = started;
    if (config.BILLING_ENABLED) {
      for (const [k, v] of Object.entries(rateLimitHeaders(admission.bucket))) c.header(k, v);
    }
    if (!admission.admitted) {
      throw new ServiceError(admission.status, admission.error, {
        ...(admission.status === 429
          ? { headers: { 'Retry-After': String(Math.max(1, admission.bucket.retryAfterSeconds)) } }
          : {}),
      });
    }
    return admission.limits;
  }

  /** The answer of a streamed execution: its events as they happen (api/execution-stream.ts). */
  function stream(c: Context, started: StartedCall): Response {
    const limits = admitted(c, started);
    const { executionId } = started;
    const body = executionEventStream({
      db,
      executionId,
      after: 0,
      heartbeatMs: config.STREAM_HEARTBEAT_MS,
      limits: async () => limits,
    });
    return c.body(body, 200, { ...SSE_HEADERS, 'X-Execution-Id': executionId });
  }

  async function answer(c: Context, started: StartedCall, mode: 'sync' | 'async') {
    const { executionId, createdAt } = started;
    const limits = admitted(c, started);
    if (mode === 'async') {
      return c.json(
        {
          success: true as const,
          taskId: executionId,
          status: 'queued' as const,
          createdAt: (createdAt as Date).toISOString(),
          links: { status: `/api/jobs/${executionId}` },
          limits,
        },
        202,
      );
    }
    const done = await result(started);
    if (!done) {
      // Still running: hand the caller the job to poll rather than hold the connection forever.
      const job = jobRecord(await getExecution(db, executionId), executionId, links.url);
      return c.json(
        {
          success: false as const,
          // Should the run have failed since the wait ended, its error says why (a failed run
          // records one; this text stands in should it not, as the answer documents a string).
          error: ('error' in job ? job.error : null) ?? 'The execution is still running: poll its job',
          taskId: job.taskId,
          status: job.status,
          ...('output' in job ? { output: job.output } : {}),
          ...('metadata' in job ? { metadata: job.metadata } : {}),
          limits,
        },
        202,
      );
    }
    const metadata = {
      duration: Date.parse(done.endedAt) - Date.parse(done.startedAt),
      startTime: done.startedAt,
      endTime: done.endedAt,
    };
    if (done.status === 'completed')
      return c.json({ success: true as const, executionId, output: done.output, limits, metadata }, 200);
    // A cancelled run is answered as a failed one is (200, success false), and says it was cancelled.
    return c.json(
      {
        success: false as const,
        executionId,
        error: done.error ?? null,
        ...(done.status === 'cancelled' ? { status: 'cancelled' as const } : {}),
        limits,
        metadata,
      },
      200,
    );
  }

  return { start, result, answer, stream };
}
