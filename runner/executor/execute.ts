// Runs a workflow definition: walks the graph, starting each block once everything upstream has
// settled, independent blocks concurrently; follows only taken branches (skipping the rest); routes
// a failure down `error` edges or fails the run; records a trace span per block (run-block.ts runs
// each one); enforces the workflow's time limit.

import { approvalBranch } from '../blocks/approval.ts';
import type { BlockConfig, Edge, Graph } from '../blocks/block.ts';
import { AttemptAbandoned } from './abandon.ts';
import { ParkSignal } from './park.ts';
import {
  type ExecutionRequest,
  type ExecutionResult,
  type ExecutorDeps,
  type Iteration,
  type Run,
  RunFailure,
} from './run.ts';
import { checkpointed, runAttempts } from './run-block.ts';
import { linkedAbort } from './signals.ts';
import type { Span } from './trace.ts';
import '../../zod-messages.ts';

export type { ExecutionRequest, ExecutionResult, ExecutorDeps, ModelUsage } from './run.ts';
export { MAX_WORKFLOW_DEPTH } from './run.ts';

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
  const run: Run = {
    req,
    deps,
    signal,
    spans: [],
    cost: { total: 0, models: {} },
    runGraph: (graph, roots, spans, parent, iteration) =>
      runGraph(run, graph, roots, spans, parent, iteration),
    executeChild: executeWorkflow,
  };
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
    // The runner's loss, not the run's: the job is retried and resumes from its checkpoints.
    if (err instanceof AttemptAbandoned) throw err;
    if (err instanceof ParkSignal && !signal.aborted)
      return {
        ...finish({ success: false, error: err.message }),
        ...(Number.isFinite(err.dueAt) ? { parkedUntil: new Date(err.dueAt) } : {}),
        ...(err.pause ? { pause: err.pause } : {}),
      };
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
  // The earliest moment a parked block is due: the graph ends parked once nothing else runs.
  let parkedUntil: number | null = null;
  // What the first paused approval waits for: the execution is then `paused`, not just parked.
  let pause: ParkSignal['pause'];

  return new Promise((resolve, reject) => {
    const settleIfDone = () => {
      if (running > 0) return;
      unlink();
      if (failure) reject(failure);
      else if (parent.aborted) reject(parent.reason);
      else if (parkedUntil !== null) reject(new ParkSignal(parkedUntil, undefined, undefined, pause));
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
              const selected = selectedBranch(block, done.output);
              setEdges(id, (e) => e.branch !== 'error' && (e.branch === undefined || e.branch === selected));
            }
          })
          .catch((err: Error) => {
            if (err instanceof ParkSignal) {
              // Nothing downstream of a parked block starts; the other paths run on until they end or park.
              parkedUntil = Math.min(parkedUntil ?? err.dueAt, err.dueAt);
              pause ??= err.pause;
            } else if (err instanceof AttemptAbandoned) {
              // Abandoning wins over any failure: the attempt's end is not the run's outcome.
              failure = err;
              stop(err);
            } else if (!failure && !parent.aborted) {
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
          const selected = selectedBranch(block, result.output);
          setEdges(id, (e) => e.branch !== 'error' && (e.branch === undefined || e.branch === selected));
        })
        .catch((err: Error) => {
          const handled = graph.edges.some((e) => e.from === id && e.branch === 'error');
          if (err instanceof AttemptAbandoned) {
            failure = err;
            stop(err);
          } else if (handled && !signal.aborted) {
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

/** The branch a block's output selects (a condition's or an approval's); undefined: no branch. */
function selectedBranch(block: BlockConfig, output: unknown): string | null | undefined {
  if (block.type === 'condition') return (output as { selected: string | null }).selected;
  if (block.type === 'approval') return approvalBranch(output);
  return undefined;
}
