// A signal that aborts when its parent does or when told to, with the link undone explicitly:
// AbortSignal.any holds its sources weakly and leaves the cleanup to the garbage collector, which
// a run per execution (and a graph per loop iteration) turns into measurable work.

export interface LinkedAbort {
  signal: AbortSignal;
  /** Aborts this signal (not the parent) with the reason given. */
  abort(reason: unknown): void;
  /** Stops following the parent; call it once the signal is no longer needed. */
  unlink(): void;
}

export function linkedAbort(parent?: AbortSignal): LinkedAbort {
  const controller = new AbortController();
  const link: LinkedAbort = {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    unlink: () => {},
  };
  if (!parent) return link;
  if (parent.aborted) {
    controller.abort(parent.reason);
    return link;
  }
  const follow = () => controller.abort(parent.reason);
  parent.addEventListener('abort', follow, { once: true });
  link.unlink = () => parent.removeEventListener('abort', follow);
  return link;
}
