// What a streamed execution's event stream needs besides its events, shared by the reconnect route
// and the replay of a streamed execute under its Idempotency-Key: the client's resume point and the
// `limits` of the terminal event. A retry of a streamed execute is answered as a reconnect from its
// `Last-Event-ID` (from event 1 without it): the execution it started, replayed, then live.
import type { Context } from 'hono';
import { authorizeResource } from '../db/access.ts';
import { getExecution } from '../db/executions.ts';
import type { StoredAnswer } from '../db/idempotency-keys.ts';
import { currentUsage, type LimitsObject, limitsObject, principalBillingContext } from '../db/usage.ts';
import { invalidField } from '../errors.ts';
import type { ApiDeps, ApiEnv } from './context.ts';
import { executionEventStream, SSE_HEADERS } from './execution-stream.ts';

/** An event id the client sent: a whole number, at most the largest one an execution may reach. */
export function eventId(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) > 2_147_483_647) {
    throw invalidField(name, 'Must be a whole number of 0 or more (an event id)', 'invalid_format');
  }
  return Number(trimmed);
}

/** The caller's limits now, for the terminal event of a stream it reads. */
export function currentLimits(
  { db, config, clock }: ApiDeps,
  c: Context<ApiEnv>,
): () => Promise<LimitsObject> {
  const principal = c.get('principal');
  return async () => {
    const ctx = principalBillingContext(principal);
    const usage = await currentUsage(db, ctx, clock());
    return limitsObject(ctx, usage.buckets, config.BILLING_ENABLED ? usage.spend : null);
  };
}

/** The stream answer of an execution started with `stream: true`, after `after`. */
export function executionStreamAnswer(
  deps: ApiDeps,
  c: Context<ApiEnv>,
  executionId: string,
  after: number,
  headers: Record<string, string> = {},
): Response {
  const body = executionEventStream({
    db: deps.db,
    executionId,
    after,
    heartbeatMs: deps.config.STREAM_HEARTBEAT_MS,
    limits: currentLimits(deps, c),
  });
  return c.body(body, 200, { ...SSE_HEADERS, 'X-Execution-Id': executionId, ...headers });
}

/**
 * The replay of a kept answer that was an event stream (api/middleware/idempotency.ts keeps its
 * headers, not its body): the stream of the execution it names, or null when it names none that
 * streams (the key then answers 410, as for any answer not kept). The caller must still be allowed
 * to read it: the replay reads the execution now, not a copy of what was sent.
 */
export function streamReplayer(deps: ApiDeps) {
  return async (c: Context<ApiEnv>, answer: StoredAnswer, replayed: Record<string, string>) => {
    const executionId = answer.headers['x-execution-id'];
    if (!executionId || !answer.headers['content-type']?.startsWith('text/event-stream')) return null;
    const after = eventId('Last-Event-ID', c.req.header('last-event-id')) ?? 0;
    const row = await getExecution(deps.db, executionId);
    if (!row || row.stream_outputs === null) return null;
    await authorizeResource(deps.db, c.get('principal'), row.workspace_id, 'read', 'Execution');
    return executionStreamAnswer(deps, c, executionId, after, replayed);
  };
}
