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

/**
 * What a paused execution waits for (an `approval` block, runner/blocks/approval.ts): the Job record
 * shows it as `metadata.pause` (with the resume URL added), a resume answers it.
 */
export interface PauseDetails {
  /** The approval block's id (its checkpoint key: only the top graph pauses). */
  blockId: string;
  /** Names this pause: a resume must name it (a later pause of the same execution gets another). */
  contextId: string;
  message: string;
  /** What the approver sends back, typed like workflow inputs. */
  fields: Record<string, { type: string; required: boolean; default?: unknown; description?: string }>;
  pausedAt: string;
  /** When the `timeout` branch is taken; null: never. */
  expiresAt: string | null;
}

/**
 * Thrown by a block that parks the execution until `dueAt` (epoch ms; Infinity: a pause without
 * timeout, which only a resume or a cancel ends).
 */
export class ParkSignal extends Error {
  readonly dueAt: number;
  readonly pending: PendingRetry | undefined;
  /** A parked `wait`: the block's output once due (an approval's: its timeout output). */
  readonly output: unknown;
  /** Set when the execution waits for a person (status `paused`). */
  readonly pause: PauseDetails | undefined;
  constructor(dueAt: number, pending?: PendingRetry, output?: unknown, pause?: PauseDetails) {
    super(Number.isFinite(dueAt) ? `Parked until ${new Date(dueAt).toISOString()}` : 'Paused');
    this.name = 'ParkSignal';
    this.dueAt = dueAt;
    this.pending = pending;
    this.output = output;
    this.pause = pause;
  }
}
