// Waiting on work that takes no AbortSignal (a DNS lookup inside a request, an SDK call) only until a
// signal aborts: the caller stops waiting and the work finishes on its own. Also loaded by the function
// pool's worker threads (runner/sandbox/worker.ts): keep this module free of imports.

/**
 * `work`'s outcome, or a rejection with `signal.reason` as soon as the signal aborts, whichever comes
 * first. Without a signal, `work` itself. The abort listener is removed once `work` settles, and a
 * rejection of the abandoned work is handled here, so it never surfaces as an unhandled rejection.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
