// Runs a workflow definition: walks the graph, starting each block once everything upstream has
// settled, independent blocks concurrently; follows only taken branches (skipping the rest); routes
// a failure down `error` edges or fails the run; records a trace span per block; enforces the
// workflow's time limit.

import type { Queryable } from '../../db/client.ts';
import type { BlockConfig, BlockContext, BlockResult, Edge, Graph, RunnerSettings } from '../blocks/block.ts';
import { BLOCK_TYPES } from '../blocks/index.ts';
import type { Embedders } from '../embeddings/embedder.ts';
import type { FunctionPool } from '../sandbox/pool.ts';
import {
  type Checkpoint,
  type CheckpointStore,
  type ModelUsage,
  needsCheckpoint,
  scopedStore,
} from './checkpoints.ts';
import type { Definition } from './definition.ts';
import { checkInputs } from './inputs.ts';
import { type ResolveScope, resolveValue, substituteIntoCode } from './references.ts';
import { type RetryDelay, retryPolicy, waitInProcess, withRetries } from './retry.ts';
import { linkedAbort } from './signals.ts';
import { type Span, traceValue } from './trace.ts';
import '../../zod-messages.ts';

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
}

/** A failure that ends the run: the block that failed and why. */
class RunFailure extends Error {}

/** What one block cost, for its checkpoint (the run's total is added to as well). */
type Tally = { total: number; models: Record<string, ModelUsage> };

/** Where a graph runs: inside which loop or parallel iteration, and its blocks' checkpoint key prefix. */
interface Iteration {
  parent: string;
  index: number;
  /** Prefixes the checkpoint keys of the graph's blocks (`loop[2]/`). */
  path: string;
}

interface Run {
  req: ExecutionRequest;
  deps: ExecutorDeps;
  signal: AbortSignal;
  spans: Span[];
  cost: Tally;
}

export async function executeWorkflow(req: ExecutionRequest, deps: ExecutorDeps): Promise<ExecutionResult> {
  const startedAt = new Date();
  const timeoutMs = req.definition.timeoutMs ?? deps.defaultTimeoutMs;
  // One controller, aborted by the time limit or by the caller's signal. AbortSignal.timeout and
  // AbortSignal.any cost a weakly held composite signal per run and per graph, which the profile of a
  // draining runner put at about 3% of its main thread, before the collector's share.
  const { signal, abort, unlink } = linkedAbort(req.signal);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort(new DOMException(`Workflow timed out after ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const run: Run = { req, deps, signal, spans: [], cost: { total: 0, models: {} } };
  const finish = (fields: { success: boolean; output?: unknown; error?: string }): ExecutionResult => ({
    ...fields,
    spans: run.spans,
    blockCost: run.cost.total,
    models: run.cost.models,
    startedAt,
    endedAt: new Date(),
  });
  try {
    const roots = new Map<string, unknown>([['start', req.inputs]]);
    const outputs = await runGraph(run, req.definition, roots, run.spans, run.signal);
    return finish({ success: true, output: workflowOutput(req.definition, outputs) });
  } catch (err) {
    if (timedOut) return finish({ success: false, error: `Workflow timed out after ${timeoutMs} ms` });
    if (req.signal?.aborted) return finish({ success: false, error: 'Execution was cancelled' });
    return finish({ success: false, error: (err as Error).message });
  } finally {
    clearTimeout(timer);
    unlink();
  }
}

/**
 * The execution's output: the data of the response block that ran last; without one, the outputs
 * of the blocks that ran and lead nowhere, by id.
 */
function workflowOutput(graph: Graph, outputs: Map<string, { output: unknown; order: number }>): unknown {
  let response: { output: unknown; order: number } | undefined;
  for (const block of graph.blocks) {
    const done = outputs.get(block.id);
    if (block.type === 'response' && done && (!response || done.order > response.order)) response = done;
  }
  if (response) return response.output;
  const leaves: Record<string, unknown> = {};
  for (const block of graph.blocks) {
    const done = outputs.get(block.id);
    if (done && !graph.edges.some((e) => e.from === block.id && outputs.has(e.to)))
      leaves[block.id] = done.output;
  }
  return leaves;
}

type EdgeState = 'active' | 'inactive';

/**
 * Runs one graph to the end. Resolves to the outputs of the blocks that ran; rejects with the
 * first failure no `error` edge handled, after the blocks still running have stopped.
 */
async function runGraph(
  run: Run,
  graph: Graph,
  roots: Map<string, unknown>,
  spans: Span[],
  /** The enclosing graph's signal (the run's, for the top graph): a loop body stops with its loop. */
  parent: AbortSignal,
  iteration?: Iteration,
): Promise<Map<string, { output: unknown; order: number }>> {
  const incoming = new Map<string, number[]>(graph.blocks.map((b) => [b.id, []]));
  for (const [i, e] of graph.edges.entries()) incoming.get(e.to)?.push(i);
  const edgeState: (EdgeState | undefined)[] = graph.edges.map(() => undefined);
  const started = new Set<string>();
  const outputs = new Map<string, { output: unknown; order: number }>();
  // Aborted when the enclosing graph is, or when one of this graph's blocks fails.
  const { signal, abort: stop, unlink } = linkedAbort(parent);
  let running = 0;
  let failure: Error | null = null;

  return new Promise((resolve, reject) => {
    const settleIfDone = () => {
      if (running > 0) return;
      unlink();
      if (failure) reject(failure);
      else if (parent.aborted) reject(parent.reason);
      else resolve(outputs);
    };
    const setEdges = (from: string, pick: (e: Edge) => boolean) => {
      graph.edges.forEach((e, i) => {
        if (e.from === from) edgeState[i] = pick(e) ? 'active' : 'inactive';
      });
      for (const e of graph.edges) if (e.from === from) visit(e.to);
    };
    const visit = (id: string) => {
      if (started.has(id) || failure || signal.aborted) return;
      const edges = incoming.get(id) ?? [];
      if (edges.some((i) => edgeState[i] === undefined)) return;
      started.add(id);
      // Every path into this block was decided: it runs if one of them was taken, else it is skipped.
      if (edges.length > 0 && !edges.some((i) => edgeState[i] === 'active')) {
        setEdges(id, () => false);
        return;
      }
      const block = graph.blocks.find((b) => b.id === id) as BlockConfig;
      running++;
      if (run.req.checkpoints) {
        const handled = graph.edges.some((e) => e.from === id && e.branch === 'error');
        checkpointed(run, run.req.checkpoints, block, roots, signal, spans, handled, iteration)
          .then((done) => {
            outputs.set(id, { output: done.output, order: outputs.size });
            roots.set(id, done.output);
            if (done.errored) setEdges(id, (e) => e.branch === 'error');
            else {
              const selected =
                block.type === 'condition'
                  ? (done.output as { selected: string | null }).selected
                  : undefined;
              setEdges(id, (e) => e.branch !== 'error' && (e.branch === undefined || e.branch === selected));
            }
          })
          .catch((err: Error) => {
            if (!failure && !parent.aborted) {
              failure =
                err instanceof RunFailure ? err : new RunFailure(`Block "${id}" failed: ${err.message}`);
              stop(failure);
            }
          })
          .finally(() => {
            running--;
            settleIfDone();
          });
        return;
      }
      runAttempts(run, block, roots, signal, spans, iteration)
        .then((result) => {
          outputs.set(id, { output: result.output, order: outputs.size });
          roots.set(id, result.output);
          const selected =
            block.type === 'condition' ? (result.output as { selected: string | null }).selected : undefined;
          setEdges(id, (e) => e.branch !== 'error' && (e.branch === undefined || e.branch === selected));
        })
        .catch((err: Error) => {
          const handled = graph.edges.some((e) => e.from === id && e.branch === 'error');
          if (handled && !signal.aborted) {
            // The error path gets the error as this block's output.
            const output = { error: err.message };
            outputs.set(id, { output, order: outputs.size });
            roots.set(id, output);
            setEdges(id, (e) => e.branch === 'error');
          } else if (!failure && !parent.aborted) {
            // (Once the enclosing graph has stopped, blocks fail because of it: not a failure of this graph.)
            failure =
              err instanceof RunFailure ? err : new RunFailure(`Block "${id}" failed: ${err.message}`);
            stop(failure);
          }
        })
        .finally(() => {
          running--;
          settleIfDone();
        });
    };
    for (const block of graph.blocks) visit(block.id);
    settleIfDone();
  });
}

/** A block's run; with `retry`, its attempts, each its own span (runner/executor/retry.ts). */
function runAttempts(
  run: Run,
  block: BlockConfig,
  roots: Map<string, unknown>,
  signal: AbortSignal,
  spans: Span[],
  iteration?: Iteration,
  tally?: Tally,
): Promise<BlockResult> {
  const policy = retryPolicy(block);
  if (!policy) return runBlock(run, block, roots, signal, spans, iteration, undefined, tally);
  return withRetries(policy, signal, run.deps.retryDelay ?? waitInProcess, (attempt) =>
    runBlock(run, block, roots, signal, spans, iteration, attempt, tally),
  );
}

/**
 * A block's run under checkpoints: the recorded result when an earlier attempt finished it (its spans
 * and cost join this run's, once); else its run, then (for a block with side effects) its checkpoint,
 * committed before the caller lets its dependents start. A failure the `error` edge takes is a result.
 */
async function checkpointed(
  run: Run,
  store: CheckpointStore,
  block: BlockConfig,
  roots: Map<string, unknown>,
  signal: AbortSignal,
  spans: Span[],
  handled: boolean,
  iteration?: Iteration,
): Promise<{ output: unknown; errored: boolean }> {
  const key = (iteration?.path ?? '') + block.id;
  const saved = store.get(key);
  if (saved) {
    spans.push(...saved.spans);
    run.cost.total += saved.cost;
    for (const [model, usage] of Object.entries(saved.models)) addUsage(run, model, usage);
    return { output: saved.output, errored: saved.errored };
  }
  if (!needsCheckpoint(block)) {
    try {
      return {
        output: (await runAttempts(run, block, roots, signal, spans, iteration)).output,
        errored: false,
      };
    } catch (err) {
      if (handled && !signal.aborted) return { output: { error: (err as Error).message }, errored: true };
      throw err;
    }
  }
  const own: Span[] = [];
  const tally: Tally = { total: 0, models: {} };
  let done: { output: unknown; errored: boolean };
  try {
    done = {
      output: (await runAttempts(run, block, roots, signal, own, iteration, tally)).output,
      errored: false,
    };
  } catch (err) {
    if (!handled || signal.aborted) throw err;
    done = { output: { error: (err as Error).message }, errored: true };
  } finally {
    spans.push(...own);
  }
  const checkpoint: Checkpoint = { ...done, spans: own, cost: tally.total, models: tally.models };
  await store.save(key, checkpoint);
  return done;
}

async function runBlock(
  run: Run,
  block: BlockConfig,
  roots: Map<string, unknown>,
  signal: AbortSignal,
  spans: Span[],
  iteration?: Iteration,
  attempt?: number,
  tally?: Tally,
): Promise<BlockResult> {
  const type = BLOCK_TYPES.get(block.type);
  if (!type) throw new Error(`Unknown block type "${block.type}"`);
  const started = Date.now();
  const span: Span = {
    blockId: block.id,
    type: block.type,
    ...(iteration ? { iteration: iteration.index, parent: iteration.parent } : {}),
    ...(attempt ? { attempt } : {}),
    status: 'success',
    startedAt: new Date(started).toISOString(),
    endedAt: '',
    durationMs: 0,
  };
  const logs: string[] = [];
  const scope: ResolveScope = { roots, secrets: run.req.secrets };
  try {
    const { id: _id, type: _type, retry: _retry, ...fields } = block;
    const raw = [...(type.rawFields ?? []), ...(type.graphField ? [type.graphField, 'edges'] : [])];
    const resolved = resolveValue(fields, scope, raw);
    span.input = traceValue(resolved);
    const parsed = type.schema.safeParse(resolved);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new Error(
        `Invalid ${block.type} config after resolving references: ${first?.path.join('.') || '(root)'}: ${first?.message}`,
      );
    }
    const ctx = blockContext(run, block, roots, scope, signal, logs, span, iteration, tally);
    if (attempt) ctx.retried = true;
    const result = await type.run(parsed.data, ctx);
    span.output = traceValue(result.output);
    if (result.cost) {
      span.cost = result.cost;
      run.cost.total += result.cost;
      if (tally) tally.total += result.cost;
    }
    if (result.usage) {
      const usage = { ...result.usage, cost: result.cost ?? 0 };
      addUsage(run, result.usage.model, usage);
      if (tally) addTo(tally, result.usage.model, usage);
    }
    return result;
  } catch (err) {
    span.status = 'error';
    // A block stopped from outside says why; a block whose own nested graph failed keeps that failure.
    span.error =
      signal.aborted && (err === signal.reason || !(err instanceof RunFailure))
        ? (abortMessage(signal) ?? (err as Error).message)
        : (err as Error).message;
    throw err;
  } finally {
    const ended = Date.now();
    span.endedAt = new Date(ended).toISOString();
    span.durationMs = ended - started;
    if (logs.length) span.logs = logs;
    spans.push(span);
  }
}

function addUsage(run: Run, model: string, usage: ModelUsage) {
  addTo(run.cost, model, usage);
}

function addTo(tally: Tally, model: string, usage: ModelUsage) {
  const m = tally.models[model] ?? { promptTokens: 0, completionTokens: 0, cost: 0 };
  m.promptTokens += usage.promptTokens;
  m.completionTokens += usage.completionTokens;
  m.cost += usage.cost;
  tally.models[model] = m;
}

function abortMessage(signal: AbortSignal): string | undefined {
  const reason = signal.reason as Error | undefined;
  if (reason instanceof RunFailure) return 'Stopped: another block failed';
  if (reason?.name === 'TimeoutError') return 'Stopped: the workflow timed out';
  if (reason?.name === 'CancelledError') return 'Stopped: the execution was cancelled';
  return undefined;
}

function blockContext(
  run: Run,
  block: BlockConfig,
  roots: Map<string, unknown>,
  scope: ResolveScope,
  signal: AbortSignal,
  logs: string[],
  span: Span,
  iteration?: Iteration,
  tally?: Tally,
): BlockContext {
  const key = (iteration?.path ?? '') + block.id;
  const { req, deps } = run;
  const blocks: Record<string, unknown> = {};
  for (const [k, v] of roots) if (k !== 'start' && k !== 'loop' && k !== 'parallel') blocks[k] = v;
  return {
    executionId: req.executionId,
    workspaceId: req.workspaceId,
    workflowId: req.workflowId,
    signal,
    pool: deps.pool,
    db: deps.db,
    embedders: deps.embedders,
    settings: deps.settings,
    scope: { inputs: roots.get('start'), start: roots.get('start'), blocks, loop: roots.get('loop') },
    substituteCode: (code) => substituteIntoCode(code, scope),
    log: (line) => logs.push(line),
    async runGraph(graph, loopVars) {
      // Each iteration sees the outer outputs and its own loop variables; its blocks' outputs stay its own.
      const inner = new Map(roots);
      inner.set('loop', loopVars);
      inner.set('parallel', loopVars);
      const outputs = await runGraph(run, graph, inner, run.spans, signal, {
        parent: block.id,
        index: loopVars.index,
        path: `${key}[${loopVars.index}]/`,
      });
      return Object.fromEntries([...outputs].map(([id, o]) => [id, o.output]));
    },
    async runWorkflow(workflowId, inputs) {
      const depth = (req.depth ?? 0) + 1;
      if (depth > MAX_WORKFLOW_DEPTH)
        throw new Error(`Child workflows nest deeper than ${MAX_WORKFLOW_DEPTH}`);
      const definition = await deps.loadDeployed(req.workspaceId, workflowId);
      if (!definition) throw new Error(`Workflow ${workflowId} is not a deployed workflow of this workspace`);
      const checked = checkInputs(definition.inputs, inputs);
      if (checked.issues.length)
        throw new Error(
          `Child workflow inputs: ${checked.issues.map((i) => `${i.path.at(-1)}: ${i.message}`).join('; ')}`,
        );
      const child = await executeWorkflow(
        {
          ...req,
          workflowId,
          definition,
          inputs: checked.inputs,
          depth,
          signal,
          ...(req.checkpoints ? { checkpoints: scopedStore(req.checkpoints, `${key}>`) } : {}),
        },
        deps,
      );
      span.children = child.spans;
      run.cost.total += child.blockCost;
      if (tally) tally.total += child.blockCost;
      for (const [model, usage] of Object.entries(child.models)) {
        addUsage(run, model, usage);
        if (tally) addTo(tally, model, usage);
      }
      if (!child.success) throw new Error(`Child workflow failed: ${child.error}`);
      return child.output;
    },
  };
}
