// How much work is waiting or under way, read for the metrics a scrape reports: queue jobs by
// queue and state (pg-boss's own table, in schema `pgboss`), executions by status, and knowledge
// documents still to ingest. Counts are read live, so they are exact at the moment of the scrape.
import type { Queryable } from './client.ts';

export interface QueueBacklog {
  queue: string;
  /** pg-boss's state: `created` (waiting), `retry` (waiting for another attempt) or `active`. */
  state: string;
  jobs: number;
  /** Age of the oldest job in this state, in seconds. */
  oldestSeconds: number;
}

/** Jobs not yet finished, by queue and state (finished ones are pg-boss's history, not backlog). */
export async function queueBacklog(db: Queryable): Promise<QueueBacklog[]> {
  const rows = await db.query<{ queue: string; state: string; jobs: number; oldest_seconds: number }>(
    `select name as queue, state::text as state, count(*)::int as jobs,
            extract(epoch from now() - min(created_on))::float8 as oldest_seconds
       from pgboss.job
      where state in ('created', 'retry', 'active')
      group by name, state`,
  );
  return rows.map((r) => ({
    queue: r.queue,
    state: r.state,
    jobs: r.jobs,
    oldestSeconds: Math.max(0, r.oldest_seconds),
  }));
}

/** Executions waiting for or held by a runner, or paused for a person, by status (partial indexes answer this). */
export async function executionsInFlight(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from executions
      where status in ('queued', 'processing', 'paused') group by status`,
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}

/** Executions that ended within the last `seconds`, by final status (completed or failed). */
export async function executionsFinishedSince(db: Queryable, seconds: number): Promise<Map<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from executions
      where ended_at > now() - make_interval(secs => $1) and status in ('completed', 'failed')
      group by status`,
    [seconds],
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}

/** Knowledge documents still to ingest, by processing status (pending or processing). */
export async function ingestionBacklog(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    `select processing_status as status, count(*)::int as n from knowledge_documents
      where processing_status in ('pending', 'processing') group by processing_status`,
  );
  return new Map(rows.map((r) => [r.status, r.n]));
}
