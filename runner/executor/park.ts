// Parking (DESIGN.md "Run control"): a `wait` or a retry delay longer than PARK_AFTER_MS does not hold
// the runner. The block throws a ParkSignal; its checkpoint records what it finished and when it is due
// (`dueAt`); the graph lets its other running blocks finish (nothing downstream of the parked block
// starts), then the run ends as parked and the runner releases everything it held. When due, a sweeper
// re-enqueues the execution; the next attempt takes the checkpoints and continues after them.
//
// Only the top graph of an execution parks: inside a loop, a parallel or a child workflow the other
// iterations would have to be stopped and replayed, so there a retry delay waits in-process and a
// `wait` is limited to MAX_IN_PROCESS_WAIT_MS.

/** Waits and retry delays up to this long run in-process; longer ones park the execution. */
export const PARK_AFTER_MS = 5_000;

/** The longest `wait` that can run in-process (inside loops, parallels and child workflows). */
export const MAX_IN_PROCESS_WAIT_MS = 300_000;

/** The longest `wait` (30 days). */
export const MAX_WAIT_MS = 30 * 24 * 3_600_000;

/** Where a parked retry goes on: its next attempt and the causes of the attempts made so far. */
export interface PendingRetry {
  attempt: number;
  causes: string[];
}

/** Thrown by a block that parks the execution until `dueAt` (epoch ms). */
export class ParkSignal extends Error {
  readonly dueAt: number;
  readonly pending: PendingRetry | undefined;
  /** A parked `wait`: the block's output once due. */
  readonly output: unknown;
  constructor(dueAt: number, pending?: PendingRetry, output?: unknown) {
    super(`Parked until ${new Date(dueAt).toISOString()}`);
    this.name = 'ParkSignal';
    this.dueAt = dueAt;
    this.pending = pending;
    this.output = output;
  }
}
