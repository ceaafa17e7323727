// Lets a sync execute call wait for its execution to finish without polling: one LISTEN per API
// process on the channel runners notify when they record a result; each waiter is woken by id.
import type { Db } from '../db/client.ts';
import { EXECUTION_DONE_CHANNEL } from '../db/executions.ts';

export interface CompletionWaiter {
  /**
   * Registers interest in an execution before it is enqueued (so its notice cannot be missed);
   * the promise resolves true when it finished, false when timeoutMs passed first.
   */
  wait(executionId: string, timeoutMs: number): { done: Promise<boolean>; cancel(): void };
  close(): Promise<void>;
}

export async function startCompletionWaiter(db: Db): Promise<CompletionWaiter> {
  const waiting = new Map<string, Set<() => void>>();
  const unlisten = await db.listen(EXECUTION_DONE_CHANNEL, (id) => {
    const wakers = waiting.get(id);
    if (!wakers) return;
    waiting.delete(id);
    for (const wake of wakers) wake();
  });
  return {
    wait(executionId, timeoutMs) {
      let wake!: () => void;
      let timer: NodeJS.Timeout | undefined;
      const remove = () => {
        clearTimeout(timer);
        const set = waiting.get(executionId);
        set?.delete(wake);
        if (set && set.size === 0) waiting.delete(executionId);
      };
      const done = new Promise<boolean>((resolve) => {
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
        timer = setTimeout(() => {
          remove();
          resolve(false);
        }, timeoutMs);
        const set = waiting.get(executionId) ?? new Set();
        set.add(wake);
        waiting.set(executionId, set);
      });
      return { done, cancel: remove };
    },
    close: () => unlisten(),
  };
}
