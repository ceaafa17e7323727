// The state one execution carries through its graphs and blocks (runner/executor/execute.ts walks the
// graphs, runner/executor/run-block.ts runs each block), and the types the runner sees.
import type { Queryable } from '../../db/client.ts';
import type { Graph, RunnerSettings } from '../blocks/block.ts';
import type { Embedders } from '../embeddings/embedder.ts';
import type { FunctionPool } from '../sandbox/pool.ts';
import type { CheckpointStore, ModelUsage } from './checkpoints.ts';
import type { Definition } from './definition.ts';
import type { PauseDetails } from './park.ts';
import type { RetryDelay } from './retry.ts';
import type { Span } from './trace.ts';

/** Nesting limit of child workflows: stops a workflow that calls itself. */
export const MAX_WORKFLOW_DEPTH = 5;

export interface ExecutorDeps {
  pool: FunctionPool;
  /** The service's database, for blocks over workspace data. */
  db: Queryable;
  embedders: Embedders;
  settings: RunnerSettings;
  /** The deployed definition of a workflow of the workspace, or null when there is none. */
  loadDeployed(workspaceId: string, workflowId: string): Promise<Definition | null>;
  defaultTimeoutMs: number;
  /** The wait between a block's attempts (tests inject one that records instead of sleeping). */
  retryDelay?: RetryDelay;
  /** The clock that decides when a parked block is due (runner/executor/park.ts); tests move it. */
  now?: () => Date;
}

export interface ExecutionRequest {
  executionId: string;
  workspaceId: string;
  workflowId: string;
  definition: Definition;
  inputs: Record<string, unknown>;
  secrets: Map<string, string>;
  depth?: number;
  /** Cancels the run from outside (shutdown, admin cancel). */
  signal?: AbortSignal;
  /** Where finished blocks with side effects are recorded, and found again after a crash. */
  checkpoints?: CheckpointStore;
  /** Long waits and retry delays may park the execution (the runner's top-level run, with checkpoints). */
  parkable?: boolean;
  /** Told of block starts and ends and model tokens, for a caller streaming the run (runner/stream-events.ts). */
  events?: ExecutionEvents;
}

/** What the executor tells a streaming caller as blocks run; calls must not block or throw. */
export interface ExecutionEvents {
  blockStarted(blockId: string, blockType: string): void;
  blockCompleted(blockId: string, blockType: string, output: unknown): void;
  blockFailed(blockId: string, blockType: string, error: string): void;
  /** Where a block's model tokens go; undefined when its tokens are not wanted. */
  tokens(blockId: string): ((chunk: string) => void) | undefined;
}

export type { ModelUsage } from './checkpoints.ts';

export interface ExecutionResult {
  success: boolean;
  output?: unknown;
  error?: string;
  spans: Span[];
  /** Dollars spent in blocks (model tokens), and token usage by model. */
  blockCost: number;
  models: Record<string, ModelUsage>;
  startedAt: Date;
  endedAt: Date;
  /** Set when the run parked (runner/executor/park.ts): when it is due to go on. */
  parkedUntil?: Date;
  /** Set when the run paused for a person (runner/blocks/approval.ts); parkedUntil is its timeout, if any. */
  pause?: PauseDetails;
}

/** A failure that ends the run: the block that failed and why. */
export class RunFailure extends Error {}

/** What one block cost, for its checkpoint (the run's total is added to as well). */
export type Tally = { total: number; models: Record<string, ModelUsage> };

/** Where a graph runs: inside which loop or parallel iteration, and its blocks' checkpoint key prefix. */
export interface Iteration {
  parent: string;
  index: number;
  /** Prefixes the checkpoint keys of the graph's blocks (`loop[2]/`). */
  path: string;
}

export interface Run {
  req: ExecutionRequest;
  deps: ExecutorDeps;
  signal: AbortSignal;
  spans: Span[];
  cost: Tally;
  /** Runs a loop's or parallel's body (execute.ts runGraph), with the enclosing graph's signal. */
  runGraph(
    graph: Graph,
    roots: Map<string, unknown>,
    spans: Span[],
    parent: AbortSignal,
    iteration?: Iteration,
  ): Promise<Map<string, { output: unknown; order: number }>>;
  /** Runs a child workflow (execute.ts executeWorkflow). */
  executeChild(req: ExecutionRequest, deps: ExecutorDeps): Promise<ExecutionResult>;
}

export function addUsage(run: Run, model: string, usage: ModelUsage) {
  addTo(run.cost, model, usage);
}

export function addTo(tally: Tally, model: string, usage: ModelUsage) {
  const m = tally.models[model] ?? { promptTokens: 0, completionTokens: 0, cost: 0 };
  m.promptTokens += usage.promptTokens;
  m.completionTokens += usage.completionTokens;
  m.cost += usage.cost;
  tally.models[model] = m;
}

export function abortMessage(signal: AbortSignal): string | undefined {
  const reason = signal.reason as Error | undefined;
  if (reason instanceof RunFailure) return 'Stopped: another block failed';
  if (reason?.name === 'TimeoutError') return 'Stopped: the workflow timed out';
  if (reason?.name === 'CancelledError') return 'Stopped: the execution was cancelled';
  return undefined;
}

/** The run's clock, in epoch ms. */
export function nowMs(run: Run): number {
  return (run.deps.now?.() ?? new Date()).getTime();
}
