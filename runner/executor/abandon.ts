// When the runner, not the run, fails: losing our own database mid-run gives the attempt back to
// the queue (docs/workflows.md, "Checkpoints: what a crash repeats").
import { isDatabaseUnavailable } from '../../db/unavailable.ts';

/**
 * Not the run's failure but the runner's: our database went away while a block's checkpoint was
 * recorded, or while a block that uses nothing else (table, a knowledge search's statements) ran.
 * The attempt stops without an outcome and the queue retries the execution, which resumes from the
 * checkpoints that were recorded (a block whose checkpoint was lost runs again). Nothing converts it
 * into a block error: no retry policy, `error` edge or loop takes it.
 */
export class AttemptAbandoned extends Error {
  constructor(cause: unknown) {
    super(`The database went away during the run: ${(cause as Error).message}`, { cause });
  }
}

/**
 * An error of a call that reaches only our database, with the database going away turned into
 * AttemptAbandoned. Only for such calls: a block's own target refusing a connection has the same codes.
 */
export function lostDatabase(err: unknown): unknown {
  return isDatabaseUnavailable(err) ? new AttemptAbandoned(err) : err;
}

/** A checkpoint's write, with the database going away turned into AttemptAbandoned. */
export async function recording<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw lostDatabase(err);
  }
}
