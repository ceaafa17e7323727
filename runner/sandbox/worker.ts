// The worker module of the function pool (runner/sandbox/pool.ts): runs one user function body (a workflow's
// function block) per task, in a node:vm context that holds only Web-standard globals (a new one, or one
// kept warm for the same function of the same workspace: runner/sandbox/contexts.ts). Those globals
// are sandbox-realm code (runner/sandbox/prelude.ts); whatever they need from the host (network,
// URL parsing, Web Crypto, timers, console) crosses a narrow bridge that carries only
// primitives (runner/sandbox/bridge.ts), so no host object (whose `.constructor.constructor` is the host's `Function`, and so
// `process`) is ever reachable from user code.
//
// How user code is kept on a leash:
// - Every piece of user code runs inside `script.runInContext(...)`: the first run starts the function, and
//   later "pump" runs (an empty script) drain the context's own microtask queue (`microtaskMode:
//   'afterEvaluate'`), so synchronous loops and endless promise chains both keep this thread inside a run.
// - A function waiting on host work (timers, fetch) ends at its time limit through this thread's own
//   timer. A run that never returns is stopped by the pool, which terminates this worker once the task has
//   been running past its limit (the task's start time is shared with it through `WorkerData.startedAt`).
//   vm's own `timeout` option is not used: it starts a watchdog thread on every call, which measured about
//   half the cost of a short function.
// - The host only ever calls into the context through promise resolving functions (V8 built-ins) with
//   primitive arguments, then pumps; it never calls a user function or reads a user object directly.
// - Memory is the pool's job too (worker `resourceLimits`, and a watch on the worker's heap limit and
//   ArrayBuffer memory: runner/threads/slots.ts). Past its heap limit, this worker goes on, with room to
//   spare, until the pool stops it (the heap guard, runner/threads/worker-slot.ts); a function that ends in
//   the meantime is not answered for.
import { getHeapStatistics } from 'node:v8';
import vm from 'node:vm';
import { workerData } from 'node:worker_threads';
import { HEAP_LIMIT_BYTES, pastHeapLimit, registerTaskSlot, slotTable } from '../threads/worker-slot.ts';
import { type BridgeTask, createBridge } from './bridge.ts';
import { compile, compileErrorMessage, ENTRY_NAME, SCRIPT_FILENAME } from './compile.ts';
import { type Sandbox, sandboxContexts } from './contexts.ts';
import type { WorkerData, WorkerOutcome, WorkerTask } from './task.ts';

assertVmModulesFlag();
// A sandboxed promise rejected with no handler is the user's business; by default it would crash the worker.
process.on('unhandledRejection', () => {});

// ---------------------------------------------------------------------------------------------------------
// The task

export default async function runFunction(task: WorkerTask): Promise<WorkerOutcome> {
  const heap = getHeapStatistics();
  registerTaskSlot(slots, task.slot, heap.external_memory);
  sandboxes.checkHeap(heap.used_heap_size, memoryLimitBytes);
  let script: vm.Script;
  try {
    script = compile(task.code, task.language, rejectDynamicImport);
  } catch (error) {
    return { ok: false, error: compileErrorMessage(error), logs: [] };
  }
  return new Promise<WorkerOutcome>((resolve) => {
    const execution = createExecution(task, resolve);
    if (!execution) {
      resolve({ ok: false, error: 'Function execution failed inside the sandbox', logs: [] });
      return;
    }
    current = execution;
    run(execution, script);
  });
}

interface Execution extends BridgeTask {
  timeoutMs: number;
  deadline: number;
  /** The context it runs in, with that context's own TypeError. */
  sandbox: Sandbox<Execution>;
  deadlineTimer: NodeJS.Timeout | undefined;
  pumpScheduled: boolean;
  /** Ended by its own settle (returned or threw) with no host work pending: its context may serve again. */
  clean: boolean;
  resolve(outcome: WorkerOutcome): void;
}

/** The execution this worker is running (a worker runs one task at a time). */
let current: Execution | null = null;

const slots = slotTable((workerData as WorkerData | undefined)?.slots);
const startTable = (workerData as WorkerData | undefined)?.startedAt
  ? new BigInt64Array((workerData as WorkerData).startedAt)
  : null;

/** Tells the pool when this slot's task started its clock: the pool's deadline is the worker's. */
function markStarted(slot: number, now: number): void {
  if (!startTable || !Number.isInteger(slot) || slot < 0 || slot >= startTable.length) return;
  Atomics.store(startTable, slot, BigInt(Math.floor(performance.timeOrigin + now)));
}

const memoryLimitBytes = (workerData as WorkerData | undefined)?.memoryLimitBytes ?? HEAP_LIMIT_BYTES;
const sandboxes = sandboxContexts<Execution>({
  bridge: (sandbox) => createBridge(sandbox, { finish, schedulePump }),
  entryName: ENTRY_NAME,
  filename: SCRIPT_FILENAME,
  importModuleDynamically: rejectDynamicImport,
});

function createExecution(task: WorkerTask, resolve: (outcome: WorkerOutcome) => void): Execution | null {
  const sandbox = sandboxes.take(typeof task.reuseKey === 'string' ? task.reuseKey : null, task.scope);
  if (!sandbox) return null;
  const now = performance.now();
  markStarted(task.slot, now);
  const execution: Execution = {
    timeoutMs: task.timeoutMs,
    deadline: now + task.timeoutMs,
    sandbox,
    logs: [],
    logBytes: 0,
    logsDropped: false,
    pending: 0,
    timers: new Map(),
    nextTimerId: 1,
    keys: new Map(),
    nextKeyId: 1,
    abort: null,
    deadlineTimer: undefined,
    pumpScheduled: false,
    done: false,
    clean: false,
    resolve,
  };
  sandbox.execution = execution;
  return execution;
}

function run(execution: Execution, script: vm.Script): void {
  execution.deadlineTimer = setTimeout(() => finishTimedOut(execution), execution.timeoutMs);
  runInContext(execution, script);
}

/** Runs a script in the execution's context (unless its time is up), then checks whether the function ended. */
function runInContext(execution: Execution, script: vm.Script): void {
  if (execution.deadline <= performance.now()) {
    finishTimedOut(execution);
    return;
  }
  try {
    script.runInContext(execution.sandbox.context);
  } catch {
    // Only the host can throw here: neither the entry call nor a microtask drain lets user errors escape.
    finish(execution, { ok: false, error: 'Function execution failed inside the sandbox', logs: [] });
    return;
  }
  // Settled in this run: the microtasks queued after the settle have run too, so the context is idle.
  if (execution.clean) {
    execution.clean = false;
    sandboxes.release(execution.sandbox);
    return;
  }
  if (!execution.done && execution.pending === 0) {
    finish(execution, {
      ok: false,
      error: 'Function never finished: it awaits a promise that nothing is left to settle',
      logs: [],
    });
  }
}

/** Drains the context's microtasks after host work (a timer, a fetch) resolved something inside it. */
function schedulePump(execution: Execution): void {
  if (execution.pumpScheduled || execution.done) return;
  execution.pumpScheduled = true;
  // One pump per event-loop turn, however many host operations completed in it.
  setImmediate(() => {
    execution.pumpScheduled = false;
    if (!execution.done) runInContext(execution, PUMP_SCRIPT);
  });
}

function finishTimedOut(execution: Execution): void {
  finish(execution, {
    ok: false,
    error: `Function exceeded its time limit of ${execution.timeoutMs} ms`,
    logs: [],
  });
}

function finish(execution: Execution, outcome: WorkerOutcome, settled = false): void {
  if (execution.done) return;
  execution.done = true;
  // A function that went past the heap limit gets no answer: the pool stops this worker and reports it.
  const overLimit = pastHeapLimit();
  execution.clean = settled && execution.pending === 0 && !overLimit;
  if (current === execution) current = null;
  clearTimeout(execution.deadlineTimer);
  // Pending timers and requests must not outlive the task.
  for (const timer of execution.timers.values()) clearTimeout(timer);
  execution.timers.clear();
  execution.abort?.abort();
  execution.keys.clear();
  if (overLimit) return;
  if (execution.logsDropped) execution.logs.push('[console output truncated]');
  execution.resolve({ ...outcome, logs: execution.logs });
  sandboxes.prepareSpare();
}

function rejectDynamicImport(): never {
  const execution = current;
  if (!execution) throw 'import() is not available in function code';
  // The rejection reaches the sandbox's promise through host microtasks, outside any pump: count it as
  // pending work and pump once it has landed.
  execution.pending++;
  setImmediate(() => {
    execution.pending--;
    schedulePump(execution);
  });
  // The rejection reason lands in user code, so it must be an object of the sandbox's realm.
  throw new execution.sandbox.contextTypeError('import() is not available in function code');
}

/** Dynamic import can only be refused with a sandbox-realm error when this flag is on (see pool.ts). */
function assertVmModulesFlag(): void {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  if (!flags.includes('--experimental-vm-modules')) {
    throw new Error(
      'runner/sandbox/worker.ts must run with --experimental-vm-modules (see runner/sandbox/pool.ts)',
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// The empty script whose only effect is draining a context's microtasks.

const PUMP_SCRIPT = new vm.Script('', {
  filename: 'sandbox-pump.js',
  importModuleDynamically: rejectDynamicImport,
});
