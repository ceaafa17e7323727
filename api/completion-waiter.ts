// Lets a sync execute call wait for its execution to finish without polling: one LISTEN per API
// process on the channel runners notify when they record a result; each waiter is woken by id with
// the notice, which usually carries the result itself.
import type { Db } from '../db/client.ts';
import { type DoneNotice, EXECUTION_DONE_CHANNEL } from '../db/executions.ts';

export interface CompletionWaiter {
  /**
   * Registers interest in an execution before it is enqueued (so its notice cannot be missed);
   * `done` resolves to the notice, or null when timeoutMs passed first.
   */
  wait(executionId: string, timeoutMs: number): { done: Promise<DoneNotice | null>; cancel(): void };
  close(): Promise<void>;
}

export async function startCompletionWaiter(db: Db): Promise<CompletionWaiter> {
  const waiting = new Map<string, (notice: DoneNotice) => void>();
  const unlisten = await db.listen(EXECUTION_DONE_CHANNEL, (payload) => {
    let notice: DoneNotice;
    try {
      notice = JSON.parse(payload) as DoneNotice;
    } catch {
      return;
    }
    waiting.get(notice.id)?.(notice);
  });
  return {
    wait(executionId, timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const cancel = () => {
        clearTimeout(timer);
        waiting.delete(executionId);
      };
      const done = new Promise<DoneNotice | null>((resolve) => {
        waiting.set(executionId, (notice) => {
          cancel();
          resolve(notice);
        });
        timer = setTimeout(() => {
          cancel();
          resolve(null);
        }, timeoutMs);
      });
      return { done, cancel };
    },
    close: () => unlisten(),
  };
}
