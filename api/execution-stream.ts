// The Server-Sent Events answer of a streaming execution (issue 29): the execution's events read
// from Postgres (db/execution-events.ts) after a cursor, then its terminal event, derived from its
// row once it has ended. The body is a pull stream: a page of events is read only when the client
// has taken the last one (Node's response waits for `drain`), so a slow client holds one page in
// memory, never the whole run. One LISTEN per API process wakes the streams of an execution when
// its runner appends events or its end is recorded; a heartbeat comment goes out when nothing
// happened for a while (and the stream looks again, in case a notice was lost).
//
// The first token is what a chat client waits for, so the live path reads nothing: a notice carries
// the events just appended (db/execution-events.ts), and a stream whose cursor is right before them
// sends them as they came. The table stays the record: a stream reads it from its cursor whenever a
// notice does not continue it exactly (the first pull, a gap, a notice without events, more notices
// than a page while the client is slow, the execution's end), so what a client gets is the same
// ordered sequence a replay gives.
import type { Db } from '../db/client.ts';
import {
  EXECUTION_EVENTS_CHANNEL,
  lastExecutionEvent,
  parseEventsNotice,
  readExecutionEvents,
  type StreamEvent,
} from '../db/execution-events.ts';
import { EXECUTION_DONE_CHANNEL, type ExecutionRow, getExecution } from '../db/executions.ts';
import type { LimitsObject } from '../db/usage.ts';

/** Events read per pull: the most a stream holds in memory at once. */
const PAGE = 100;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Wakes a stream; `events`: those a notice carried (null: look in the table). */
type Wake = (events: StreamEvent[] | null) => void;
interface Hub {
  subscribe(executionId: string, wake: Wake): () => void;
}

// One hub per database (per process): streams come and go, the LISTENs stay.
const hubs = new WeakMap<Db, Promise<Hub>>();

function hubOf(db: Db): Promise<Hub> {
  let hub = hubs.get(db);
  if (!hub) {
    hub = startHub(db);
    hubs.set(db, hub);
  }
  return hub;
}

async function startHub(db: Db): Promise<Hub> {
  const wakes = new Map<string, Set<Wake>>();
  const wakeAll = (executionId: string, events: StreamEvent[] | null) => {
    for (const wake of wakes.get(executionId) ?? []) wake(events);
  };
  await db.listen(EXECUTION_EVENTS_CHANNEL, (payload) => {
    const notice = parseEventsNotice(payload);
    if (notice) wakeAll(notice.executionId, notice.events);
  });
  await db.listen(EXECUTION_DONE_CHANNEL, (payload) => {
    try {
      wakeAll((JSON.parse(payload) as { id: string }).id, null);
    } catch {
      // Not a notice of ours.
    }
  });
  return {
    subscribe(executionId, wake) {
      const set = wakes.get(executionId) ?? new Set();
      set.add(wake);
      wakes.set(executionId, set);
      return () => {
        set.delete(wake);
        if (!set.size) wakes.delete(executionId);
      };
    },
  };
}

export interface EventStreamOptions {
  db: Db;
  executionId: string;
  /** The last event id the client has: it is sent the ones after. */
  after: number;
  heartbeatMs: number;
  /** The `limits` of the terminal event. */
  limits(): Promise<LimitsObject>;
}

const encoder = new TextEncoder();

function frame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The terminal event of an ended execution: its name and `{success, output | error, executionId, limits}`. */
function terminal(row: ExecutionRow, limits: LimitsObject): { event: string; data: unknown } {
  const executionId = row.id;
  if (row.status === 'completed') {
    return { event: 'execution.completed', data: { success: true, output: row.output, executionId, limits } };
  }
  if (row.status === 'cancelled') {
    return {
      event: 'execution.cancelled',
      data: { success: false, error: row.error, status: 'cancelled', executionId, limits },
    };
  }
  return { event: 'execution.failed', data: { success: false, error: row.error, executionId, limits } };
}

/** The body of an SSE answer: the execution's events after `after`, live, up to its terminal event. */
export function executionEventStream(options: EventStreamOptions): ReadableStream<Uint8Array> {
  const { db, executionId, heartbeatMs } = options;
  let cursor = options.after;
  // The table may hold events this stream has not got in `noticed`: read it before waiting.
  let dirty = true;
  // Events notices carried, not yet sent: at most a page (past that the table has them).
  let noticed: StreamEvent[] = [];
  let wake: (() => void) | null = null;
  let unsubscribe: (() => void) | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const stop = () => {
    closed = true;
    clearTimeout(timer);
    unsubscribe?.();
    wake?.();
  };
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, events: StreamEvent[]) => {
    cursor = events.at(-1)?.seq ?? cursor;
    controller.enqueue(encoder.encode(events.map((e) => frame(e.seq, e.event, e.data)).join('')));
  };
  /** The noticed events that continue right after the cursor; a gap sends the stream to the table. */
  const continuing = (): StreamEvent[] => {
    noticed = noticed.filter((e) => e.seq > cursor);
    let n = 0;
    while (n < noticed.length && noticed[n]?.seq === cursor + n + 1) n++;
    if (!n && noticed.length) dirty = true;
    const taken = noticed.slice(0, n);
    noticed = noticed.slice(n);
    return taken;
  };

  return new ReadableStream<Uint8Array>(
    {
      async start() {
        const hub = await hubOf(db);
        unsubscribe = hub.subscribe(executionId, (events) => {
          if (events && noticed.length + events.length <= PAGE) noticed.push(...events);
          else dirty = true;
          wake?.();
        });
      },
      async pull(controller) {
        while (!closed) {
          const live = continuing();
          if (live.length) return send(controller, live);
          if (dirty) {
            dirty = false;
            const events = await readExecutionEvents(db, executionId, cursor, PAGE);
            if (events.length) {
              // More may follow in the table: the next pull reads on until it is caught up.
              dirty = true;
              return send(controller, events);
            }
            const row = await getExecution(db, executionId);
            if (!row || ENDED.has(row.status)) {
              // Once it has ended every event it will have is stored: those that landed between the
              // two reads are sent first.
              const late = await readExecutionEvents(db, executionId, cursor, PAGE);
              if (late.length) {
                dirty = true;
                return send(controller, late);
              }
              const id = (await lastExecutionEvent(db, executionId)) + 1;
              if (row && id > cursor) {
                const end = terminal(row, await options.limits());
                controller.enqueue(encoder.encode(frame(id, end.event, end.data)));
              }
              stop();
              controller.close();
              return;
            }
            continue;
          }
          const woken = await new Promise<boolean>((resolve) => {
            wake = () => resolve(true);
            timer = setTimeout(() => resolve(false), heartbeatMs);
          });
          wake = null;
          clearTimeout(timer);
          if (!woken && !closed) {
            // Keeps proxies from closing an idle stream; the next pull looks again.
            dirty = true;
            controller.enqueue(encoder.encode(': heartbeat\n\n'));
            return;
          }
        }
      },
      // The client went away: its stream stops; the execution runs on.
      cancel: stop,
    },
    { highWaterMark: 0 },
  );
}

/** The headers of every SSE answer. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  // Tells nginx-style proxies not to buffer the stream.
  'X-Accel-Buffering': 'no',
};
