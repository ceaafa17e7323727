// Checkpoints of finished blocks: an execution carried on by another runner after a crash (pg-boss
// re-delivers its job, the claim gives it a new attempt) takes the recorded blocks' outputs, spans and
// cost instead of running them again, so a block with side effects that finished never runs twice.
//
// Only blocks whose re-run could be felt outside the run are checkpointed, and the dependents of such
// a block start only once its checkpoint is committed (group-committed across concurrent runs by the
// store). The rest (function without fetch, condition, response, loop and parallel themselves) re-run
// after a crash, harmlessly: a run without side effects pays nothing, which keeps the sync path as fast
// as it was. A checkpoint's key is the block's id, prefixed by the iteration path inside loops and
// parallels (`loop[2]/call`), and by the calling block inside a child workflow (`child>call`).
import type { Queryable } from '../../db/client.ts';
import type { BlockConfig } from '../blocks/block.ts';
import type { PauseDetails, PendingRetry } from './park.ts';
import type { Span } from './trace.ts';

export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

/** What a finished block leaves: its output, its spans (one per attempt) and what it cost. */
export interface Checkpoint {
  output: unknown;
  /** The block failed and its `error` edge took over (the output is then `{error}`). */
  errored: boolean;
  spans: Span[];
  cost: number;
  models: Record<string, ModelUsage>;
  /** The block parked the execution until then (epoch ms): before it, a takeover parks again. */
  dueAt?: number;
  /** A parked retry: the block is not finished; it goes on with this attempt once due. */
  pending?: PendingRetry;
  /** A paused approval: what it waits for; a resume replaces this checkpoint with the answer. */
  pause?: PauseDetails;
}

export interface CheckpointStore {
  /** The checkpoint an earlier attempt recorded under this key. */
  get(key: string): Checkpoint | undefined;
  /** Records a checkpoint; resolves once it is committed (or refused: the attempt lost its execution). */
  save(key: string, checkpoint: Checkpoint): Promise<void>;
  /**
   * Runs a block whose writes go to the store's own database (see writesWithCheckpoint) in one
   * transaction with its checkpoint: both commit or neither, so a crash at any instant leaves the
   * writes done once with the block recorded, or not done at all.
   */
  saveWith?<T>(
    key: string,
    work: (tx: Queryable) => Promise<{ result: T; checkpoint: Checkpoint }>,
  ): Promise<T>;
}

/** The store seen from inside a child workflow run by the block at `prefix`. */
export function scopedStore(store: CheckpointStore, prefix: string): CheckpointStore {
  const { saveWith } = store;
  return {
    get: (key) => store.get(prefix + key),
    save: (key, checkpoint) => store.save(prefix + key, checkpoint),
    ...(saveWith ? { saveWith: (key, work) => saveWith(prefix + key, work) } : {}),
  };
}

/**
 * Whether a block's re-run after a crash could be felt outside the execution (a call, a write, a
 * charge) or costs much time: then it is checkpointed. Decided on the block's config as written.
 */
export function needsCheckpoint(block: BlockConfig): boolean {
  switch (block.type) {
    case 'http':
    case 'agent':
    case 'workflow':
    case 'knowledge':
    case 'wait':
    case 'approval':
      return true;
    case 'table':
      return block.operation !== 'query';
    case 'function':
      // Sandboxed code reaches outside only through fetch.
      return typeof block.code === 'string' && block.code.includes('fetch');
    default:
      return false;
  }
}

/** Whether a block's side effects are writes to the checkpoints' own database (a table's rows). */
export function writesWithCheckpoint(block: BlockConfig): boolean {
  return block.type === 'table' && block.operation !== 'query';
}
