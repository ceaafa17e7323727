// The events of streaming executions (issue 29): the runner appends them in order as an execution
// runs, and NOTIFYs EXECUTION_EVENTS_CHANNEL; API processes read them from a cursor at each client's
// pace. Only executions started with `stream: true` (executions.stream_outputs set) have any.
import type { Queryable } from './client.ts';

export const EXECUTION_EVENTS_CHANNEL = 'execution_events';
/**
 * Postgres refuses a NOTIFY payload of 8000 bytes or more: a batch whose notice would be larger is
 * announced by its execution id alone, and readers read it from the table.
 */
const MAX_NOTICE_BYTES = 7900;

/**
 * A notice on EXECUTION_EVENTS_CHANNEL: the execution, and the events just appended when they fit
 * (as stored: the same seq and jsonb-normalised data a read of the table gives). A reader whose cursor
 * is right before them sends them without a read; any other reader reads the table.
 */
export interface ExecutionEventsNotice {
  executionId: string;
  events: StreamEvent[] | null;
}

/** A notice's payload (JSON, or a bare execution id from writers that send no events). */
export function parseEventsNotice(payload: string): ExecutionEventsNotice | null {
  if (!payload.startsWith('{')) return payload ? { executionId: payload, events: null } : null;
  try {
    const notice = JSON.parse(payload) as { id?: unknown; events?: unknown };
    if (typeof notice.id !== 'string') return null;
    return {
      executionId: notice.id,
      events: Array.isArray(notice.events) ? (notice.events as StreamEvent[]) : null,
    };
  } catch {
    return null;
  }
}

export interface StreamEvent {
  /** Increasing within the execution, from 1: the SSE `id:`. */
  seq: number;
  event: string;
  data: unknown;
}

/**
 * Appends events after the execution's last one and wakes listeners with them (or, for a batch too
 * large for a notice, with the execution id alone), in one statement. Events are
 * appended only while the execution runs: the row's share lock orders this against a cancel (or any
 * end), so a reader that has seen the execution end has seen all its events. One writer per
 * execution at a time (the runner's writer serialises its batches), so max(seq) is stable.
 * Answers the last seq written, or null when the execution had ended. `asyncCommit` commits without
 * waiting for the WAL flush (STREAM_EVENTS_ASYNC_COMMIT): the execution's next durable commit (at
 * the latest its end) makes them durable; only a Postgres crash before it loses them.
 */
export async function appendExecutionEvents(
  db: Queryable,
  executionId: string,
  events: { event: string; data: unknown }[],
  options: { asyncCommit?: boolean } = {},
): Promise<number | null> {
  const [row] = await db.query<{ last: number | null }>(
    `with durability as (
       -- Local to this statement's transaction: its commit alone skips the wait for the disk.
       select set_config('synchronous_commit', 'off', true) where $5
     ), live as (
       select id from executions where id = $1 and status in ('queued', 'processing') for share
     ), base as (
       select coalesce(max(seq), 0) as last from execution_events where execution_id = $1
     ), added as (
       insert into execution_events (execution_id, seq, event, data)
       select $1, base.last + e.ord, e.event, e.data
         from live, base,
              rows from (jsonb_to_recordset($2::jsonb) as (event text, data jsonb))
                with ordinality as e(event, data, ord)
       returning seq, event, data
     ), notice as (
       select json_build_object(
                'id', $1::text,
                'events', json_agg(json_build_object('seq', seq, 'event', event, 'data', data) order by seq)
              )::text as payload
         from added having count(*) > 0
     ), woke as (
       select pg_notify($3, case when octet_length(payload) < $4 then payload
                                 else json_build_object('id', $1::text)::text end)
         from notice
     )
     select (select max(seq) from added) as last, (select count(*) from woke)::int as woke,
            (select count(*) from durability)::int as async`,
    [
      executionId,
      JSON.stringify(events),
      EXECUTION_EVENTS_CHANNEL,
      MAX_NOTICE_BYTES,
      options.asyncCommit === true,
    ],
  );
  return row?.last ?? null;
}

/** Up to `limit` events after `after`, in order. */
export async function readExecutionEvents(
  db: Queryable,
  executionId: string,
  after: number,
  limit: number,
): Promise<StreamEvent[]> {
  return db.query<StreamEvent>(
    `select seq, event, data from execution_events
      where execution_id = $1 and seq > $2 order by seq limit $3`,
    [executionId, after, limit],
  );
}

/** The last seq stored for an execution (0: none), for the id of the terminal event. */
export async function lastExecutionEvent(db: Queryable, executionId: string): Promise<number> {
  const [row] = await db.query<{ last: number }>(
    'select coalesce(max(seq), 0)::int as last from execution_events where execution_id = $1',
    [executionId],
  );
  return row?.last ?? 0;
}

/** Deletes events stored before `before`; answers how many. */
export async function sweepExecutionEvents(db: Queryable, before: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `with swept as (delete from execution_events where created_at < $1 returning 1)
     select count(*)::int as n from swept`,
    [before],
  );
  return row?.n ?? 0;
}
