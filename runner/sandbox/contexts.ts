// The vm contexts a function-pool worker runs tasks in (runner/sandbox/worker.ts). Making a context
// and running the prelude in it is most of a short function's cost (0.75 ms of a 0.95 ms task), so a
// context that ended its task cleanly is kept warm for the next run of the same code in the same workspace,
// as a serverless platform keeps an instance warm for the same function:
// - never shared between workspaces or between different code: a warm context is keyed by both (the code
//   as written: runs of one function block share it whatever values references put into its code);
// - between runs, the prelude's `end` puts the global object back (globals a run added are dropped,
//   replaced ones restored), and `begin` gives the next run its own scope variables, entry, timers and
//   console; built-ins a run changed in place (a prototype's method) stay changed for that code only;
// - kept only after a run that settled by itself (returned or threw) with no host work left pending;
//   a timed-out, cancelled or stuck run's context is dropped (a run that never returns takes the worker);
// - at most MAX_WARM per worker, least recently used dropped first, each retired after MAX_USES runs, and
//   all dropped when the worker's heap (garbage included) passes three quarters of a function's memory
//   limit, so warm contexts never hold much of the memory a task needs;
// - none kept for a key the worker sees for the first time: code run once is not worth one.
// Tasks without a reuse key always get a context no code has run in.
import vm from 'node:vm';
import { type Bridge, type SandboxControls, SUBTLE_METHODS } from './prelude/contract.ts';
import { type PreludeInstaller, preludeSource } from './prelude.ts';

const MAX_WARM = 16;
const MAX_USES = 1000;
// Keys seen lately (a key's first run leaves no context behind).
const MAX_SEEN = 256;
// Warm contexts are dropped when the heap in use passes this share of a function's memory limit.
const HEAP_SHARE = 0.75;

export interface Sandbox<E> {
  context: vm.Context;
  /** The context's own TypeError, captured before user code runs (for errors the host raises inside). */
  contextTypeError: TypeErrorConstructor;
  controls: SandboxControls;
  /** The task the context serves (or last served): the bridge, made once per context, acts for it. */
  execution: E | null;
  /** The reuse key it was taken for; null for a one-off context. */
  key: string | null;
  uses: number;
}

export interface SandboxOptions<E> {
  /** The host functions of a context, acting for whichever task `sandbox.execution` is. */
  bridge(sandbox: Sandbox<E>): Bridge;
  entryName: string;
  filename: string;
  importModuleDynamically: () => never;
}

export function sandboxContexts<E>(options: SandboxOptions<E>) {
  const prelude = new vm.Script(preludeSource(), {
    filename: 'sandbox-prelude.js',
    importModuleDynamically: options.importModuleDynamically,
  });
  const warm = new Map<string, Sandbox<E>>();
  const seen = new Set<string>();
  // A context made ahead, while the worker would otherwise wait: a task arriving at an idle worker, with
  // no warm context for it, starts at once. No code has run in it yet.
  let spare: Sandbox<E> | null = null;
  let spareScheduled = false;

  function create(): Sandbox<E> {
    const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
      name: 'function',
      microtaskMode: 'afterEvaluate',
      importModuleDynamically: options.importModuleDynamically,
    });
    const sandbox: Sandbox<E> = {
      context,
      contextTypeError: (context as { TypeError: TypeErrorConstructor }).TypeError,
      controls: null as unknown as SandboxControls,
      execution: null,
      key: null,
      uses: 0,
    };
    const install = prelude.runInContext(context) as PreludeInstaller;
    sandbox.controls = install(options.bridge(sandbox), {
      entryName: options.entryName,
      filename: options.filename,
      subtleMethods: SUBTLE_METHODS,
    });
    return sandbox;
  }

  function fresh(): Sandbox<E> {
    const sandbox = spare ?? create();
    spare = null;
    return sandbox;
  }

  /**
   * A context ready for a task with these scope variables (the caller then sets `execution`): the warm
   * one for `key`, if it takes the scope, else a fresh one. Null only if even a fresh one refused it.
   */
  function take(key: string | null, scope: string): Sandbox<E> | null {
    const known = key !== null && sawBefore(key);
    const reused = known ? warm.get(key) : undefined;
    if (reused) {
      warm.delete(key as string);
      if (reused.controls.begin(scope)) return reused;
    }
    const sandbox = fresh();
    sandbox.key = known ? key : null;
    return sandbox.controls.begin(scope) ? sandbox : null;
  }

  function sawBefore(key: string): boolean {
    const known = seen.delete(key);
    seen.add(key);
    if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value as string);
    return known;
  }

  /** Keeps a context whose task settled by itself with nothing pending, if its globals can be put back. */
  function release(sandbox: Sandbox<E>): void {
    const { key } = sandbox;
    sandbox.uses++;
    if (key === null || sandbox.uses >= MAX_USES || !sandbox.controls.end()) return;
    warm.set(key, sandbox);
    if (warm.size > MAX_WARM) warm.delete(warm.keys().next().value as string);
  }

  /** Makes the spare context once the current turn (which answers the pool) is over. */
  function prepareSpare(): void {
    if (spare || spareScheduled) return;
    spareScheduled = true;
    setImmediate(() => {
      spareScheduled = false;
      spare ??= create();
    });
  }

  /** Called with the worker's heap in use before each task. */
  function checkHeap(usedBytes: number, limitBytes: number): void {
    if (warm.size && usedBytes > limitBytes * HEAP_SHARE) warm.clear();
  }

  return { take, release, prepareSpare, checkHeap };
}
