// What a runner process does at once and for how long: executions, worker threads, time limits,
// streams, sandboxed functions, the queue's heartbeat and supervision, schedules, ingestion.
import { z } from 'zod';
import { bool, whenUnset } from './kinds.ts';

export const runnerEnv = {
  // Runners: how many executions one runner process works at once, and its worker threads.
  RUNNER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(32)
    .describe('Executions one runner process works at once'),
  WORKER_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe("Threads of the runner's sandbox pool (function code)")
    .meta(whenUnset('number of cores')),
  WORKFLOW_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(300_000)
    .describe("Time limit of an execution (a workflow's `timeoutMs` overrides it)"),
  // How long a sync execute call waits before answering with the job to poll instead.
  SYNC_WAIT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(300_000)
    .describe('How long a sync execute call waits before answering with the job'),
  // An SSE stream with nothing to send for this long sends a comment, so proxies keep it open.
  STREAM_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(300_000)
    .default(15_000)
    .describe('How often an idle execution event stream sends a heartbeat comment'),
  EXECUTION_EVENTS_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(720)
    .default(24)
    .describe('How long the events of a streamed execution are kept for clients that reconnect'),
  // Each batch of stream events is a commit; waiting for its WAL flush is most of a first token's
  // delay on a busy disk. Off by default: a Postgres crash could then lose events clients saw live.
  STREAM_EVENTS_ASYNC_COMMIT: bool
    .default(false)
    .describe(
      '`true`: stream events commit without waiting for the disk (a faster first token; a Postgres crash may lose the last events sent)',
    ),
  FUNCTION_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(300_000)
    .default(10_000)
    .describe('Default time limit of a function block'),
  FUNCTION_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(4096)
    .default(128)
    .describe('Memory limit of a function block'),
  // A runner that stops sending heartbeats (killed, hung) loses its jobs to another after this.
  QUEUE_HEARTBEAT_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .max(3600)
    .default(30)
    .describe('A runner silent this long (killed, hung) has its executions retried by another'),
  QUEUE_SUPERVISE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(10)
    .describe('How often runners look for such executions'),
  // Schedules: how often runners look for due occurrences (pg-boss's cron pass, claimed by one
  // runner at a time); a firing lands at most this many seconds (plus a poll) after its time.
  SCHEDULE_CHECK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(45)
    .default(10)
    .describe(
      'How often runners look for due schedules; a firing lands at most this late, plus a couple of seconds',
    ),
  // Documents one runner stores at once (parsing and chunking take a worker thread each, as many
  // threads); as many more are prepared meanwhile (runner/knowledge-jobs.ts).
  INGEST_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe(
      'Documents one runner stores at once, and worker threads it parses and chunks in; as many more documents are prepared meanwhile',
    ),
  INGEST_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(128)
    .max(16384)
    .default(1024)
    .describe('Heap limit of an ingestion worker thread; a document that needs more ends `failed`'),
};
