// Parked executions (runner/executor/park.ts): a processing execution with `resume_at` set is held by
// no runner. Parking is fenced by the attempt (only the runner holding the execution parks it); the
// sweep takes due rows with a row lock (skip locked), clears `resume_at` and hands them to the caller,
// which enqueues them in the same transaction: a parked execution is resumed once.
import type { Queryable } from './client.ts';
import { EXECUTION_DONE_CHANNEL } from './executions.ts';

/**
 * Parks the execution held by this attempt; false: it is no longer this attempt's (cancelled, taken
 * over). A sync caller waiting on it hears `parked` and is handed the job (202) at once.
 */
export async function parkExecution(
  tx: Queryable,
  id: string,
  attempt: number,
  resumeAt: Date | null,
  /** Set when it waits for a person: the execution turns `paused` (db/execution-pauses.ts). */
  pause?: unknown,
): Promise<boolean> {
  const rows = await tx.query(
    `with parked as (
       update executions set resume_at = $3,
         status = case when $5::jsonb is null then status else 'paused' end, pause = $5::jsonb
        where id = $1 and attempt = $2 and status = 'processing' returning id)
     select pg_notify($4, json_build_object('id', id, 'status', 'parked')::text) from parked`,
    [id, attempt, resumeAt, EXECUTION_DONE_CHANNEL, pause === undefined ? null : JSON.stringify(pause)],
  );
  return rows.length > 0;
}

/**
 * The parked executions due at `now` (at most `limit`), taken: no longer parked. A paused one (its
 * approval's timeout) is no longer paused: a resume racing the sweep finds it so. One of a
 * concurrency group is queued again: its park gave up its slot, so it waits its turn for one (in the
 * order of its creation, ahead of those queued after it) through the limited claim, like any queued
 * execution; any other goes on `processing`.
 */
export async function takeDueExecutions(
  tx: Queryable,
  now: Date,
  limit: number,
): Promise<{ id: string; limited: boolean }[]> {
  return tx.query<{ id: string; limited: boolean }>(
    `update executions e
        set resume_at = null, pause = null,
            status = case when e.concurrency_group is null then 'processing' else 'queued' end
       from (select id from executions
              where resume_at is not null and resume_at <= $1 and status in ('processing', 'paused')
              order by resume_at limit $2 for update skip locked) due
      where e.id = due.id
      returning e.id, e.concurrency_group is not null as limited`,
    [now, limit],
  );
}
