// Waiting for what happens to executions by the notices the database sends, not by polling their Job
// records: the runners' notice on EXECUTION_DONE_CHANNEL when they record an end or park an execution
// (the one a sync execute call waits on), and, from a trigger this helper adds to the test's own
// database, a notice when a limited execution finds its concurrency group full and waits for a slot
// (the product sends none: nothing waits on it but these tests).
import type { Db } from '../../db/client.ts';
import { type DoneNotice, EXECUTION_DONE_CHANNEL } from '../../db/executions.ts';

/** An end, a park (a timer or a person), or `waiting`: queued again until its group has a free slot. */
export type NoticeStatus = DoneNotice['status'] | 'waiting';
export type ExecutionNotice = Omit<DoneNotice, 'status'> & { status: NoticeStatus };

export const ENDS: readonly NoticeStatus[] = ['completed', 'failed', 'cancelled'];

const WAITING_CHANNEL = 'test_execution_waiting';

export interface ExecutionNotices {
  /**
   * The next notice of execution `id` whose status is one of `statuses`: the first not yet taken,
   * though it came before the call; it and those before it are taken. Rejects after `timeoutMs`.
   */
  next(id: string, statuses: readonly NoticeStatus[], timeoutMs?: number): Promise<ExecutionNotice>;
  close(): Promise<void>;
}

/** Listens from now on, so a notice sent before a test asks for it is not missed. */
export async function watchExecutions(db: Db): Promise<ExecutionNotices> {
  await db.query(
    `create or replace function test_notify_execution_waiting() returns trigger language plpgsql as $$
     begin
       perform pg_notify('${WAITING_CHANNEL}', json_build_object('id', new.id, 'status', 'waiting')::text);
       return new;
     end $$`,
  );
  await db.query(
    `create or replace trigger test_execution_waiting after update of concurrency_waiting on executions
       for each row when (new.concurrency_waiting and not old.concurrency_waiting)
       execute function test_notify_execution_waiting()`,
  );
  const seen = new Map<string, ExecutionNotice[]>();
  const wanted = new Set<() => void>();
  const onPayload = (payload: string) => {
    const notice = JSON.parse(payload) as ExecutionNotice;
    // A run that ran out of retries is failed with a notice of its id alone (abandonExecution).
    notice.status ??= 'failed';
    seen.set(notice.id, [...(seen.get(notice.id) ?? []), notice]);
    for (const look of wanted) look();
  };
  const unlisten = await Promise.all([
    db.listen(EXECUTION_DONE_CHANNEL, onPayload),
    db.listen(WAITING_CHANNEL, onPayload),
  ]);
  const take = (id: string, statuses: readonly NoticeStatus[]) => {
    const list = seen.get(id) ?? [];
    const at = list.findIndex((n) => statuses.includes(n.status));
    if (at < 0) return undefined;
    seen.set(id, list.slice(at + 1));
    return list[at];
  };
  return {
    next(id, statuses, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const notice = take(id, statuses);
          if (!notice) return;
          done();
          resolve(notice);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${statuses.join(' or ')} notice of execution ${id} in ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          wanted.delete(look);
        };
        wanted.add(look);
        look();
      });
    },
    async close() {
      await Promise.all(unlisten.map((u) => u()));
    },
  };
}
