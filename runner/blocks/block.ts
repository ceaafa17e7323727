// The contract of a block type: its config schema (validated when a workflow is created or deployed)
// and its `run`, called by the executor with references already resolved in the config.
import type { z } from 'zod';
import type { Queryable } from '../../db/client.ts';
import type { ServiceError } from '../../errors.ts';
import type { Embedders } from '../embeddings/embedder.ts';
import type { PauseDetails } from '../executor/park.ts';
import type { FunctionPool } from '../sandbox/pool.ts';

export interface BlockContext {
  executionId: string;
  workspaceId: string;
  workflowId: string;
  /** Aborted when the execution times out or is cancelled: long-running blocks must stop. */
  signal: AbortSignal;
  /** Runs user code (function bodies, condition expressions) in the worker-thread pool. */
  pool: FunctionPool;
  /** The service's database, for blocks over workspace data (tables); scoped by workspaceId. */
  db: Queryable;
  /** Embeds search queries for the knowledge block, with each knowledge base's own model. */
  embedders: Embedders;
  /** Values a block's user code may read: workflow inputs, block outputs, the loop variables. */
  scope: Record<string, unknown>;
  /** Code with its references replaced by JSON literals of their current values. */
  substituteCode(code: string): string;
  /** Lines for this block's trace span (captured console output, notes). */
  log(line: string): void;
  /** Service settings blocks need (HTTP allow-list, model provider); see runner/settings.ts. */
  settings: RunnerSettings;
  /** Runs a nested graph (loop and parallel bodies) once, with the given loop variables. */
  runGraph(graph: Graph, loopVars: { item: unknown; index: number }): Promise<Record<string, unknown>>;
  /**
   * Set when the block carries `retry`: the executor makes the attempts, so the block reports a
   * transient failure (runner/blocks/failures.ts) instead of retrying itself or answering it as output.
   */
  retried?: boolean;
  /**
   * Set where the execution may park (runner/executor/park.ts): throws when `ms` is long enough to
   * park, the block's output once due being `output`; returns when the block should wait in-process.
   */
  park?(ms: number, output: unknown): void;
  /**
   * Set where the execution may park: pauses it for a person (runner/blocks/approval.ts); always
   * throws. `timeout` is the block's output should `timeoutMs` pass without an answer.
   */
  pause?(request: {
    message: string;
    fields: PauseDetails['fields'];
    timeoutMs: number | undefined;
    timeout: unknown;
  }): never;
  /** Set when the execution streams this block's model tokens: each text delta as it arrives. */
  onToken?: (chunk: string) => void;
  /** Runs another deployed workflow of the workspace as a child; resolves to its output. */
  runWorkflow(workflowId: string, inputs: Record<string, unknown>): Promise<unknown>;
}

/** A set of blocks and the edges between them: the workflow itself, or a loop's body. */
export interface Graph {
  blocks: BlockConfig[];
  edges: Edge[];
}

export interface BlockConfig {
  id: string;
  type: string;
  [field: string]: unknown;
}

export interface Edge {
  from: string;
  to: string;
  /** A condition's branch id, or `error` for the path taken when the source block fails. */
  branch?: string;
}

export interface RunnerSettings {
  /** Hosts or CIDRs the http block may reach although they are loopback or private. */
  httpAllowList: string[];
  httpMaxResponseBytes: number;
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  /** The function block's default time limit. */
  functionTimeoutMs: number;
  functionMemoryMb: number;
}

export interface BlockResult {
  output: unknown;
  /** Dollars this block cost (model tokens); 0 when absent. */
  cost?: number;
  /** Model usage, for the execution's cost breakdown. */
  usage?: { model: string; promptTokens: number; completionTokens: number };
}

export interface BlockType<Config> {
  type: string;
  /** The block's own fields (besides id and type). */
  schema: z.ZodType<Config>;
  /** Fields whose strings are code, not templates: references in them are left for the block. */
  rawFields?: readonly string[];
  /** Fields holding nested graphs (loop and parallel bodies), validated as graphs of their own. */
  graphField?: string;
  run(config: Config, ctx: BlockContext): Promise<BlockResult>;
}

/** A store's refusal as one line for a block's span: its message, then each field issue. */
export function describeServiceError(err: ServiceError, message = err.message): string {
  const issues = (err.details ?? []).map((d) => `${d.path.join('.') || '(root)'}: ${d.message}`);
  return issues.length ? `${message}: ${issues.join('; ')}` : message;
}
