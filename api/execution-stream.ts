// The Server-Sent Events answer of a streaming execution (issue 29): the execution's events read
// from Postgres (db/execution-events.ts) after a cursor, then its terminal event, derived from its
// row once it has ended. The body is a pull stream: a page of events is read only when the client
// has taken the last one (Node's response waits for `drain`), so a slow client holds one page in
// memory, never the whole run. One LISTEN per API process wakes the streams of an execution when
// its runner appends events or its end is recorded; a heartbeat comment goes out when nothing
// happened for a while (and the stream looks again, in case a notice was lost).
import type { Db } from '../db/client.ts';
import { EXECUTION_EVENTS_CHANNEL, lastExecutionEvent, readExecutionEvents } from '../db/execution-events.ts';
import { EXECUTION_DONE_CHANNEL, type ExecutionRow, getExecution } from '../db/executions.ts';
import type { LimitsObject } from '../db/usage.ts';

/** Events read per pull: the most a stream holds in memory at once. */
const PAGE = 100;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

type Wake = () => void;
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
  const wakeAll = (executionId: string) => {
    for (const wake of wakes.get(executionId) ?? []) wake();
  };
  await db.listen(EXECUTION_EVENTS_CHANNEL, wakeAll);
  await db.listen(EXECUTION_DONE_CHANNEL, (payload) => {
    try {
      wakeAll((JSON.parse(payload) as { id: string }).id);
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
  let dirty = false;
  let wake: Wake | null = null;
  let unsubscribe: (() => void) | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const stop = () => {
    closed = true;
    clearTimeout(timer);
    unsubscribe?.();
    wake?.();
  };

  return new ReadableStream<Uint8Array>(
    {
      async start() {
        const hub = await hubOf(db);
        unsubscribe = hub.subscribe(executionId, () => {
          dirty = true;
          wake?.();
        });
      },
      async pull(controller) {
        while (!closed) {
          dirty = false;
          // The row first: once it has ended, every event it will ever have is already stored.
          const row = await getExecution(db, executionId);
          const events = await readExecutionEvents(db, executionId, cursor, PAGE);
          if (events.length) {
            cursor = events.at(-1)?.seq ?? cursor;
            controller.enqueue(encoder.encode(events.map((e) => frame(e.seq, e.event, e.data)).join('')));
            return;
          }
          if (!row || ENDED.has(row.status)) {
            const id = (await lastExecutionEvent(db, executionId)) + 1;
            if (row && id > cursor) {
              const end = terminal(row, await options.limits());
              controller.enqueue(encoder.encode(frame(id, end.event, end.data)));
            }
            stop();
            controller.close();
            return;
          }
          if (dirty) continue;
          const woken = await new Promise<boolean>((resolve) => {
            wake = () => resolve(true);
            timer = setTimeout(() => resolve(false), heartbeatMs);
          });
          wake = null;
          clearTimeout(timer);
          if (!woken && !closed) {
            // Keeps proxies from closing an idle stream; the next pull looks again.
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
