// Completion callbacks. When an execution that names a callback URL ends, a delivery job is sent
// in the transaction that records the end (jobs/send-callbacks.ts), so it is never lost; the handler here
// POSTs the execution's Job record (the body of GET /api/jobs/{id}) to the URL, through the http
// block's SSRF guard, signed with the workspace's callback secret:
//   X-Callback-Timestamp: <unix seconds>
//   X-Callback-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
// A 2xx answer delivers it. Anything else (another status, a redirect, which is not followed, a
// timeout, a network error, a refused destination) is a failed attempt: recorded, then retried by
// pg-boss with exponential backoff (CALLBACK_RETRY_*). 4xx answers are retried too: a receiver
// being deployed or rotating its secret answers 404 or 401 for a while and should still get it.
import { createHmac } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Job } from 'pg-boss';
import type { Config } from '../config.ts';
import { callbackSecret, recordDeliveryAttempt } from '../db/callbacks.ts';
import type { Queryable } from '../db/client.ts';
import { getExecution, jobAnswer } from '../db/executions.ts';
import { approvalLinks } from '../jobs/approval-links.ts';
import type { ExecutionCallbackPayload } from '../jobs/queues.ts';
import type { Logger } from '../logger.ts';
import { callbackUrlFormProblem } from '../net/callback-url.ts';
import { type AllowList, guardedRequest, parseAllowList } from '../net/network-guard.ts';
import { untilAborted } from './until-aborted.ts';

// A receiver's answer is read only so the exchange ends cleanly; past this it is cut off.
const MAX_ANSWER_BYTES = 64 * 1024;

/** The signature header's value: HMAC-SHA256 over "<timestamp>.<body>", hex, with its scheme. */
export function callbackSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface CallbackJobDeps {
  db: Queryable;
  encryptionKey: Buffer;
  config: Config;
  log: Logger;
}

export function callbackJobHandler(deps: CallbackJobDeps) {
  const { db, config, log } = deps;
  const allowList = parseAllowList(config.HTTP_ALLOW_LIST);
  const links = approvalLinks(config);
  return async (job: Job<ExecutionCallbackPayload>) => {
    const { executionId, retryLimit, paused } = job.data;
    const row = await getExecution(db, executionId);
    // Deleted, or settled by an attempt whose job was then taken over: nothing left to deliver.
    if (!row?.callback_url || row.callback_status !== 'pending') return;
    // A `paused` event is sent while the execution still waits on that pause (an answer makes it moot).
    if (paused && (row.status !== 'paused' || row.pause?.contextId !== paused.contextId)) return;
    const { secret } = await callbackSecret(db, deps.encryptionKey, row.workspace_id);
    const attempt = job.retryCount + 1;
    const body = JSON.stringify(paused ? { event: 'paused', ...jobAnswer(row, links.url) } : jobAnswer(row));
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    const answer = await post(row.callback_url, allowList, config.CALLBACK_TIMEOUT_MS, body, {
      'content-type': 'application/json',
      'user-agent': 'workflow-service-callbacks/1',
      'x-callback-timestamp': String(timestamp),
      'x-callback-signature': callbackSignature(secret, timestamp, body),
      'x-callback-attempt': String(attempt),
      'x-execution-id': executionId,
    });
    const delivered = 'status' in answer && answer.status >= 200 && answer.status < 300;
    const gaveUp = !delivered && job.retryCount >= retryLimit;
    if (paused) {
      // The event is no end: the delivery record (and callback_status) belong to the end's callback.
      if (delivered || gaveUp) return;
      const why = 'status' in answer ? `HTTP ${answer.status}` : answer.error;
      throw new Error(`paused callback attempt ${attempt} failed: ${why}`);
    }
    await recordDeliveryAttempt(db, {
      executionId,
      attempt,
      url: row.callback_url,
      statusCode: 'status' in answer ? answer.status : null,
      error: 'error' in answer ? answer.error : null,
      durationMs: Math.round(performance.now() - started),
      delivered,
      gaveUp,
    });
    if (delivered) return;
    // The URL stays out of logs: receivers often carry a token in it.
    const why = 'status' in answer ? `HTTP ${answer.status}` : answer.error;
    if (gaveUp) {
      log.warn('callback given up', { executionId, attempts: attempt, lastError: why });
      return;
    }
    // Thrown, the job fails and pg-boss schedules the next attempt after its backoff.
    throw new Error(`callback attempt ${attempt} failed: ${why}`);
  };
}

/** One POST, answered by a status or failed with a reason fit for the delivery record; never throws. */
async function post(
  target: string,
  allowList: AllowList,
  timeoutMs: number,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number } | { error: string }> {
  // Stored before this check existed, or by a future path that skipped it: refused, not requested.
  const problem = callbackUrlFormProblem(target);
  if (problem) return { error: `invalid callback URL: ${problem}` };
  const signal = AbortSignal.timeout(timeoutMs);
  let response: IncomingMessage | undefined;
  try {
    // DNS lookups do not take a signal: without this a slow resolver would outlive the timeout.
    const answer = await untilAborted(
      guardedRequest({
        url: new URL(target),
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        body,
        allowList,
        signal,
        followRedirects: false,
      }),
      signal,
    );
    response = answer.response;
    const status = response.statusCode ?? 0;
    await discard(response);
    return { status };
  } catch (err) {
    if (signal.aborted) return { error: `timed out after ${timeoutMs} ms` };
    return { error: (err as Error).message };
  } finally {
    response?.destroy();
  }
}

/** Reads and drops the receiver's answer, at most MAX_ANSWER_BYTES; its status is all that counts. */
async function discard(response: IncomingMessage): Promise<void> {
  let total = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > MAX_ANSWER_BYTES) break;
    }
  } catch {
    // A body cut short (timeout, reset) does not change the status already received.
  }
}
