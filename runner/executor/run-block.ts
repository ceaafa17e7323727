// One block's run inside an execution: its attempts (`retry`), its checkpoint when it has side effects,
// its span, and the context its type's code gets (nested graphs and child workflows go back to
// execute.ts through the Run).
import type { BlockConfig, BlockContext, BlockResult } from '../blocks/block.ts';
import { BLOCK_TYPES } from '../blocks/index.ts';
import { AttemptAbandoned, recording } from './abandon.ts';
import {
  type Checkpoint,
  type CheckpointStore,
  needsCheckpoint,
  scopedStore,
  writesWithCheckpoint,
} from './checkpoints.ts';
import { checkInputs } from './inputs.ts';
import { PARK_AFTER_MS, ParkSignal, type PendingRetry } from './park.ts';
import { type ResolveScope, resolveValue, substituteIntoCode } from './references.ts';
import { retryPolicy, waitInProcess, withRetries } from './retry.ts';
import {
  abortMessage,
  addTo,
  addUsage,
  type Iteration,
  MAX_WORKFLOW_DEPTH,
  nowMs,
  type Run,
  RunFailure,
  type Tally,
} from './run.ts';
import { type Span, traceValue } from './trace.ts';

/** A block's run; with `retry`, its attempts, each its own span (runner/executor/retry.ts). */
export function runAttempts(
  run: Run,
  block: BlockConfig,
  roots: Map<string, unknown>,
  signal: AbortSignal,
  spans: Span[],
  iteration?: Iteration,
  tally?: Tally,
  from?: PendingRetry,
): Promise<BlockResult> {
  const policy = retryPolicy(block);
  if (!policy) return runBlock(run, block, roots, signal, spans, iteration, undefined, tally);
  return withRetries(
    policy,
    signal,
    run.deps.retryDelay ?? waitInProcess,
    (attempt) => runBlock(run, block, roots, signal, spans, iteration, attempt, tally),
    from,
    // An injected delay (the backoff tests record delays) takes every delay, long ones included.
    canPark(run, iteration) && !run.deps.retryDelay
      ? (ms, next) => {
          if (ms > PARK_AFTER_MS) throw new ParkSignal(nowMs(run) + ms, next);
        }
      : undefined,
  );
}

/** Only the top graph of the runner's own run parks (runner/executor/park.ts says why). */
function canPark(run: Run, iteration: Iteration | undefined): boolean {
  return run.req.parkable === true && run.req.checkpoints !== undefined && iteration === undefined;
}

/**
 * A block's run under checkpoints: the recorded result when an earlier attempt finished it (its spans
 * and cost join this run's, once); else its run, then (for a block with side effects) its checkpoint,
 * committed before the caller lets its dependents start. A failure the `error` edge takes is a result.
 */
export async function checkpointed(
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
  const own: Span[] = [];
  const tally: Tally = { total: 0, models: {} };
  let from: PendingRetry | undefined;
  if (saved) {
    // A takeover before the parked block is due (a crash after the park's checkpoint) parks again.
    // A paused approval not yet answered (nor timed out) pauses again, with the same pause.
    if (saved.pause && (saved.dueAt === undefined || saved.dueAt > nowMs(run)))
      throw new ParkSignal(saved.dueAt ?? Number.POSITIVE_INFINITY, undefined, saved.output, saved.pause);
    if (saved.dueAt !== undefined && saved.dueAt > nowMs(run))
      throw new ParkSignal(saved.dueAt, saved.pending);
    run.cost.total += saved.cost;
    for (const [model, usage] of Object.entries(saved.models)) addUsage(run, model, usage);
    if (!saved.pending) {
      spans.push(...saved.spans);
      return { output: saved.output, errored: saved.errored };
    }
    // A parked retry goes on: its earlier attempts' spans and cost stay the block's.
    from = saved.pending;
    own.push(...saved.spans);
    tally.total = saved.cost;
    tally.models = structuredClone(saved.models);
  }
  const finish = async (blockRun: Run): Promise<{ output: unknown; errored: boolean }> => {
    try {
      return {
        output: (await runAttempts(blockRun, block, roots, signal, own, iteration, tally, from)).output,
        errored: false,
      };
    } catch (err) {
      if (err instanceof ParkSignal) {
        // The park is recorded before the runner lets go of the execution.
        await recording(
          store.save(key, {
            output: err.output,
            errored: false,
            spans: [...own],
            cost: tally.total,
            models: tally.models,
            ...(Number.isFinite(err.dueAt) ? { dueAt: err.dueAt } : {}),
            ...(err.pending ? { pending: err.pending } : {}),
            ...(err.pause ? { pause: err.pause } : {}),
          }),
        );
        throw err;
      }
      if (!handled || signal.aborted || err instanceof AttemptAbandoned) throw err;
      return { output: { error: (err as Error).message }, errored: true };
    } finally {
      spans.push(...own);
    }
  };
  const checkpointOf = (result: { output: unknown; errored: boolean }): Checkpoint => ({
    ...result,
    spans: own,
    cost: tally.total,
    models: tally.models,
  });
  if (store.saveWith && writesWithCheckpoint(block)) {
    // The block writes through the checkpoint's transaction (it reaches no graph or child workflow,
    // and never parks: table blocks take no retry delays or waits).
    // Its writes use nothing but our database: losing it there abandons the attempt too.
    return recording(
      store.saveWith(key, async (db) => {
        const result = await finish({ ...run, deps: { ...run.deps, db } });
        return { result, checkpoint: checkpointOf(result) };
      }),
    );
  }
  const result = await finish(run);
  // Blocks without side effects need no checkpoint (the sync path stays one write per run), unless
  // they are a parked retry going on, whose parked checkpoint must be replaced by the finished one.
  if (!needsCheckpoint(block) && !from) return result;
  await recording(store.save(key, checkpointOf(result)));
  return result;
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
  const events = run.req.events;
  events?.blockStarted(block.id, block.type);
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
    const onToken = events?.tokens(block.id);
    if (onToken) ctx.onToken = onToken;
    const result = await type.run(parsed.data, ctx);
    events?.blockCompleted(block.id, block.type, result.output);
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
    if (err instanceof ParkSignal) {
      span.output = traceValue(err.output);
      logs.push(
        err.pause
          ? `paused for approval (context ${err.pause.contextId})${err.pause.expiresAt ? ` until ${err.pause.expiresAt}` : ''}`
          : `parked until ${new Date(err.dueAt).toISOString()}`,
      );
      throw err;
    }
    span.status = 'error';
    // A block stopped from outside says why; a block whose own nested graph failed keeps that failure.
    span.error =
      signal.aborted && (err === signal.reason || !(err instanceof RunFailure))
        ? (abortMessage(signal) ?? (err as Error).message)
        : (err as Error).message;
    events?.blockFailed(block.id, block.type, span.error);
    throw err;
  } finally {
    const ended = Date.now();
    span.endedAt = new Date(ended).toISOString();
    span.durationMs = ended - started;
    if (logs.length) span.logs = logs;
    spans.push(span);
  }
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
    ...(canPark(run, iteration)
      ? {
          park(ms: number, output: unknown) {
            if (ms > PARK_AFTER_MS) throw new ParkSignal(nowMs(run) + ms, undefined, output);
          },
          pause({ message, fields, timeoutMs, timeout }): never {
            const at = nowMs(run);
            const dueAt = timeoutMs === undefined ? Number.POSITIVE_INFINITY : at + timeoutMs;
            throw new ParkSignal(dueAt, undefined, timeout, {
              blockId: block.id,
              contextId: crypto.randomUUID(),
              message,
              fields,
              pausedAt: new Date(at).toISOString(),
              expiresAt: Number.isFinite(dueAt) ? new Date(dueAt).toISOString() : null,
            });
          },
        }
      : {}),
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
      const outputs = await run.runGraph(graph, inner, run.spans, signal, {
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
      // A child's blocks are the child's: the stream shows the workflow block, not what it ran.
      const { events: _events, ...parent } = req;
      const child = await run.executeChild(
        {
          ...parent,
          workflowId,
          definition,
          inputs: checked.inputs,
          depth,
          signal,
          parkable: false,
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
