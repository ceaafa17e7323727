// Sandbox escape catalogue (issue 11): each attempt runs as a real workflow execution (public execute
// API → queue → runner → function pool), on a runner with ONE worker thread, so that every execution
// after an attempt runs in the very worker the attempt ran in. Each attempt must end its block with a
// clear error or return nothing sensitive (no `process`, no environment values, no host files), the
// execution must end, and afterwards a normal execution succeeds with no prototype pollution visible.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heapGuardLoads } from '../../runner/threads/heap-guard.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../helpers/service.ts';
import { deployWorkflow } from '../helpers/workflows.ts';

// Whether this Node's worker threads load the heap guard (npm install builds it where it can; CI insists).
const guarded = await heapGuardLoads();
let svc: TestService;
let tenant: Tenant;
let healthId: string;
let baseline: unknown;

// Values that must never appear in an attempt's answer.
const SECRET_ENV = 'sandbox-canary-0c7f4e2a91';
const SENSITIVE = [SECRET_ENV, 'test-admin-token', 'root:x:0:0', '/work/', 'node_modules', 'piscina'];

// A normal function, plus what user code could see of the built-ins' prototypes: a property left on
// Object.prototype (or any other) by an earlier execution would show up here.
const HEALTH_CODE = `return {
  n: inputs.n + 1,
  protos: [Object, Array, Function, String, Number, Promise, Error, RegExp, JSON, Math, Reflect]
    .map((c) => Object.getOwnPropertyNames(c.prototype ?? c).sort().join(',')).join('|'),
  globals: Object.getOwnPropertyNames(globalThis).sort().join(','),
  probe: [({}).polluted, [].polluted, ''.polluted, typeof Object.prototype.toString],
}`;

/** A clear error of the block, or a harmless completion with exactly this output. */
type Expect = { error: RegExp } | { output: unknown };
interface Attempt {
  name: string;
  code: string;
  expect: Expect;
  timeoutMs?: number;
  /** Would abort the whole process without the heap guard: runs only where the guard loads. */
  needsHeapGuard?: boolean;
}

// The catalogue: name, code, expected outcome (an error pattern, or the exact harmless output).
const CATALOGUE: Attempt[] = [
  // Prototype and constructor tricks: the Function constructor reachable from sandbox values is the
  // sandbox's own, whose global object has no `process`.
  {
    name: 'this.constructor.constructor → process',
    code: "return this.constructor.constructor('return process')()",
    expect: { error: /ReferenceError: process is not defined/ },
  },
  {
    name: '({}).constructor.constructor → process',
    code: "return ({}).constructor.constructor('return process')().env",
    expect: { error: /ReferenceError: process is not defined/ },
  },
  {
    name: "Function('return this')().process",
    code: "const g = Function('return this')(); return [typeof g.process, typeof g.require, typeof g.Buffer]",
    expect: { output: ['undefined', 'undefined', 'undefined'] },
  },
  {
    name: 'Reflect.getPrototypeOf chain of a global',
    code: "let o = fetch; const seen = []; while (o) { seen.push(typeof o.constructor); o = Reflect.getPrototypeOf(o) } return [seen, fetch.constructor('return typeof process')()]",
    expect: { output: [['function', 'function', 'function'], 'undefined'] },
  },
  {
    name: 'constructor of an injected host-bridged value',
    code: "const r = await crypto.subtle.digest('SHA-256', new Uint8Array(1)); return [r.constructor.constructor('return typeof process')(), console.log.constructor('return typeof process')()]",
    expect: { output: ['undefined', 'undefined'] },
  },
  {
    name: 'Error.prepareStackTrace override to reach call sites',
    code: "Error.prepareStackTrace = (e, sites) => sites.map((s) => s.getThis && s.getThis()); return new Error('x').stack",
    expect: { output: expect.stringMatching(/^Error: x\n {4}at function\.js:1:\d+$/) },
  },
  {
    name: 'Error.prepareStackTrace override in strict mode',
    code: "'use strict'; Error.prepareStackTrace = (e, sites) => sites; return new Error('x').stack",
    expect: { error: /TypeError: Cannot assign to read only property 'prepareStackTrace'/ },
  },
  {
    name: 'Error.prepareStackTrace via defineProperty',
    code: "Object.defineProperty(Error, 'prepareStackTrace', { value: (e, s) => s }); return String(new Error('x').stack)",
    expect: { error: /Cannot redefine property|TypeError/ },
  },
  {
    name: 'captureStackTrace for host frames',
    code: 'const o = {}; Error.captureStackTrace(o); await null; const p = {}; Error.captureStackTrace(p); return [o.stack, p.stack]',
    expect: {
      output: [
        expect.stringMatching(/^\{\}\n {4}at function\.js:1:\d+$/),
        expect.stringMatching(/^\{\}\n {4}at function\.js:1:\d+$/),
      ],
    },
  },
  {
    name: 'stack of an error thrown by a host bridge',
    code: "try { await fetch('http://[::1') } catch (e) { return [String(e), String(e.stack)] }",
    expect: {
      output: [
        'TypeError: Invalid URL: http://[::1',
        expect.stringMatching(/^TypeError: Invalid URL: http:\/\/\[::1\n {4}at function\.js:1:\d+$/),
      ],
    },
  },
  {
    name: 'Symbol.for registry',
    code: "return [Symbol.for('nodejs.util.inspect.custom').toString(), typeof globalThis[Symbol.for('nodejs.rejection')], Object.getOwnPropertySymbols(globalThis).map(String)]",
    expect: { output: ['Symbol(nodejs.util.inspect.custom)', 'undefined', []] },
  },
  {
    name: 'globalThis.process / Buffer / global',
    code: 'return [typeof globalThis.process, typeof globalThis.Buffer, typeof globalThis.global, typeof globalThis.setImmediate]',
    expect: { output: ['undefined', 'undefined', 'undefined', 'undefined'] },
  },
  {
    name: 'dynamic import()',
    code: "return await import('node:fs')",
    expect: { error: /import\(\) is not available/ },
  },
  {
    name: 'import() through eval',
    code: 'return await eval("import(\'node:child_process\')")',
    expect: { error: /import\(\) is not available/ },
  },
  {
    name: 'require',
    code: "return require('fs').readFileSync('/etc/passwd', 'utf8')",
    expect: { error: /ReferenceError: require is not defined/ },
  },
  {
    name: 'module / exports / __dirname',
    code: 'return [typeof module, typeof exports, typeof __dirname, typeof __filename]',
    expect: { output: ['undefined', 'undefined', 'undefined', 'undefined'] },
  },
  {
    name: 'Object.prototype pollution via __proto__',
    code: "({}).__proto__.polluted = 'yes'; Array.prototype.polluted = 'yes'; String.prototype.polluted = 'yes'; return ({}).polluted",
    expect: { output: 'yes' },
  },
  {
    name: 'Object.prototype pollution via JSON __proto__ and defineProperty',
    code: "Object.assign({}, JSON.parse('{\"__proto__\":{\"polluted\":1}}')); Object.defineProperty(Object.prototype, 'toString', { value: () => 'owned' }); Object.prototype.hidden = 1; return 'done'",
    expect: { output: 'done' },
  },
  {
    name: 'globalThis mutation left for the next execution',
    code: "globalThis.leftover = 1; Promise.prototype.then = () => 'hijacked'; JSON.parse = () => 'hijacked'; return 'done'",
    expect: { output: 'done' },
  },
  {
    name: 'Atomics.wait on a SharedArrayBuffer',
    code: 'const sab = new SharedArrayBuffer(4); return Atomics.wait(new Int32Array(sab), 0, 0)',
    expect: { error: /SharedArrayBuffer is not defined/ },
  },
  {
    name: 'Atomics.wait on an ordinary buffer',
    code: 'return Atomics.wait(new Int32Array(4), 0, 0)',
    expect: { error: /TypeError/ },
  },
  {
    name: 'SharedArrayBuffer through a wasm shared memory',
    code: 'return new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer.constructor',
    expect: { error: /WebAssembly is not defined/ },
  },
  {
    name: 'WebAssembly infinite loop',
    code: 'const bytes = new Uint8Array([0,97,115,109,1,0,0,0,1,4,1,96,0,0,3,2,1,0,7,5,1,1,102,0,0,10,9,1,7,0,3,64,12,0,11,11]); const m = await WebAssembly.instantiate(bytes); m.instance.exports.f()',
    expect: { error: /WebAssembly is not defined/ },
  },
  {
    name: 'WebAssembly huge memory grow',
    code: 'const m = new WebAssembly.Memory({ initial: 1 }); m.grow(60000); return m.buffer.byteLength',
    expect: { error: /WebAssembly is not defined/ },
  },
  {
    name: "string bomb 'x'.repeat(2**29)",
    code: "return 'x'.repeat(2 ** 29).length",
    expect: { error: /Invalid string length|memory limit/ },
  },
  {
    name: 'string doubling loop',
    code: "let s = 'x'; for (;;) s += s; return s.length",
    expect: { error: /Invalid string length|memory limit/ },
  },
  {
    name: 'string doubling kept in an array',
    code: "const keep = []; let s = 'xy'; for (;;) { s = s + s.slice(1) + '.'; keep.push(s) }",
    expect: { error: /Invalid string length|memory limit|time limit/ },
  },
  {
    name: 'array bomb',
    code: 'const a = []; for (;;) a.push(new Array(1e6).fill(1.5))',
    expect: { error: /memory limit/ },
    // The memory limit is what this reaches; on a busy machine filling 64 MB took longer than 1 s (CI).
    timeoutMs: 15_000,
  },
  // One object far past the 64 MB limit: without the heap guard (runner/native/heap-guard.cc), V8 aborts
  // the whole process when the next GC moves it to the old generation. These run last, and only where the
  // guard loads (CI insists that it does).
  {
    name: 'one array of 160 MB, then another',
    code: 'const a = new Array(2e7); const b = new Array(2e7); return a.length + b.length',
    expect: { error: /memory limit/ },
    needsHeapGuard: true,
    // The memory limit is what this reaches; on a busy machine 160 MB may take longer than 1 s to fill.
    timeoutMs: 15_000,
  },
  {
    name: 'one array of 160 MB, filled with doubles',
    code: 'return new Array(2e7).fill(1.5).length',
    expect: { error: /memory limit/ },
    needsHeapGuard: true,
    // The memory limit is what this reaches; on a busy machine 160 MB may take longer than 1 s to fill.
    timeoutMs: 15_000,
  },
  {
    name: 'huge array length',
    code: 'return new Array(2 ** 32)',
    expect: { error: /RangeError: Invalid array length/ },
  },
  {
    name: 'ArrayBuffer bomb',
    code: 'const a = []; for (;;) a.push(new ArrayBuffer(5e7))',
    expect: { error: /memory limit|Array buffer allocation failed/ },
  },
  {
    name: 'promise that never settles',
    code: 'await new Promise(() => {})',
    expect: { error: /never finished/ },
  },
  {
    name: 'promise kept alive by a timer that never resolves it',
    code: 'await new Promise(() => setInterval(() => {}, 5))',
    expect: { error: /time limit/ },
  },
  {
    name: 'setTimeout storm',
    code: 'for (let i = 0; i < 1e6; i++) setTimeout(() => { for (let j = 0; j < 100; j++) setTimeout(() => {}, 0) }, 0); await new Promise((r) => setTimeout(r, 50)); return 1',
    expect: { error: /time limit|memory limit|Too many|timer/i },
  },
  {
    name: 'recursive async',
    code: 'async function f() { await null; return f() } await f()',
    expect: { error: /time limit|memory limit/ },
  },
  {
    name: 'while(true) inside a microtask',
    code: 'queueMicrotask(() => { while (true) {} }); await null; return 1',
    expect: { error: /time limit/ },
  },
  {
    name: 'while(true) in a then callback after the function returned',
    code: 'Promise.resolve().then(() => { for (;;) {} }); return 1',
    expect: { error: /time limit/ },
  },
  { name: 'synchronous infinite loop', code: 'while (true) {}', expect: { error: /time limit/ } },
  {
    name: 'fetch to loopback',
    code: "return await (await fetch('http://127.0.0.1:5432/')).text()",
    expect: { error: /TypeError: .*(refused|not allowed|loopback|private)/i },
  },
  {
    name: 'fetch to cloud metadata',
    code: "return await (await fetch('http://169.254.169.254/latest/meta-data/')).text()",
    expect: { error: /TypeError: .*(refused|not allowed|link-local|private)/i },
  },
  {
    name: 'fetch to localhost by name',
    code: "return await (await fetch('http://localhost:5432/')).text()",
    expect: { error: /TypeError: .*(refused|not allowed|loopback|private)/i },
  },
  {
    name: 'fetch file:// URL',
    code: "return await (await fetch('file:///etc/passwd')).text()",
    expect: { error: /TypeError/ },
  },
  {
    name: 'Deno / Bun globals',
    code: 'return [typeof Deno, typeof Bun, typeof globalThis.Deno?.env]',
    expect: { output: ['undefined', 'undefined', 'undefined'] },
  },
  {
    name: 'FinalizationRegistry / WeakRef callbacks',
    code: 'return [typeof FinalizationRegistry, typeof WeakRef]',
    expect: { output: ['undefined', 'function'] },
  },
  {
    name: 'caller / arguments.callee.caller',
    code: "function f() { return f.caller } return [await f().constructor('return typeof process')(), await (function () { return arguments.callee.caller })().constructor('return typeof process')()]",
    expect: { output: ['undefined', 'undefined'] },
  },
  {
    name: 'closing the function wrapper',
    code: '}); globalThis.escaped = 1; (async function () {',
    expect: { error: /SyntaxError/ },
  },
  {
    name: 'console flooding',
    code: "for (let i = 0; i < 1e5; i++) console.log('x'.repeat(1000)); return 'ok'",
    expect: { output: 'ok' },
  },
  // Values handed back to the host that run user code when the host reads them.
  {
    name: 'thrown Proxy whose traps loop forever',
    code: 'throw new Proxy({}, { get() { for (;;) {} }, getPrototypeOf() { for (;;) {} }, ownKeys() { for (;;) {} } })',
    expect: { error: /time limit/ },
  },
  {
    name: 'thrown Error whose message getter loops forever',
    code: "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e",
    expect: { error: /time limit/ },
  },
  {
    name: 'thrown object whose Symbol.toPrimitive loops forever',
    code: 'throw { [Symbol.toPrimitive]() { for (;;) {} }, toString() { for (;;) {} } }',
    expect: { error: /^Block "attempt" failed: \{"toString":"\[Function: toString\]"\}$/ },
  },
  {
    name: 'returned object whose getter loops forever',
    code: 'return { get x() { for (;;) {} } }',
    expect: { error: /time limit/ },
  },
  {
    name: 'returned object whose toJSON loops forever',
    code: 'return { toJSON() { for (;;) {} } }',
    expect: { error: /time limit/ },
  },
  {
    name: 'returned thenable that loops forever',
    code: 'return { then() { for (;;) {} } }',
    expect: { error: /time limit/ },
  },
  {
    name: 'returned Proxy with looping traps',
    code: 'return new Proxy({}, { ownKeys() { for (;;) {} }, get() { for (;;) {} } })',
    expect: { error: /time limit/ },
  },
  {
    name: 'console.log of an object whose getter loops forever',
    code: "console.log({ get x() { for (;;) {} } }, { toString() { for (;;) {} } }); return 'logged'",
    expect: { error: /time limit/ },
  },
  {
    name: 'deeply nested return value',
    code: 'let o = {}; for (let i = 0; i < 1e6; i++) o = { o }; return o',
    expect: { error: /not JSON data|Maximum call stack|memory limit/ },
  },
  {
    name: 'stack overflow',
    code: 'function f() { f() } f()',
    expect: { error: /RangeError: Maximum call stack size exceeded/ },
  },
];

beforeAll(async () => {
  // Set before the pool starts, so its worker threads inherit it in their process.env.
  process.env.SANDBOX_CANARY = SECRET_ENV;
  svc = await startTestService({ WORKER_THREADS: '1', FUNCTION_MEMORY_MB: '64' }, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  healthId = await deployWorkflow(svc.admin, tenant.workspace.id, {
    inputs: { n: { type: 'number', required: true } },
    blocks: [{ id: 'health', type: 'function', code: HEALTH_CODE }],
  });
  const first = await execute(healthId, { n: 1 });
  expect(first.body).toMatchObject({ success: true, output: { health: { n: 2 } } });
  baseline = first.body.output.health;
}, 120_000);

afterAll(async () => {
  delete process.env.SANDBOX_CANARY;
  await svc?.close();
});

const execute = (id: string, inputs: Record<string, unknown>) =>
  svc.call('POST', `/api/workflows/${id}/execute`, { key: tenant.key, body: { inputs } });

// Before the catalogue, whose attempts leave the worker's heap full of garbage: warm contexts give way
// to a heap that full (runner/sandbox/contexts.ts).
describe('warm contexts', () => {
  // The code marks a built-in in place, which a warm context keeps for the next run of the same code in
  // the same workspace (runner/sandbox/contexts.ts): each run reports whether it found the mark.
  // The reference makes each run's code text different: runs of one block still share the context.
  const MARKER = 'const found = typeof [].mark; Array.prototype.mark = <start.n>; return found';
  const definition = {
    inputs: { n: { type: 'number', required: true } },
    blocks: [{ id: 'mark', type: 'function', code: MARKER }],
  };

  it('are kept for the same code in the same workspace and never shared with another', async () => {
    const other = await createTenant(svc.admin, { plan: 'enterprise' });
    const ours = await deployWorkflow(svc.admin, tenant.workspace.id, definition);
    const theirs = await deployWorkflow(svc.admin, other.workspace.id, definition);
    let n = 0;
    const found = async (id: string, key: string) => {
      const res = await svc.call('POST', `/api/workflows/${id}/execute`, {
        key,
        body: { inputs: { n: n++ } },
      });
      expect(res.body).toMatchObject({ success: true });
      return res.body.output.mark as string;
    };
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await found(ours, tenant.key));
    for (let i = 0; i < 3; i++) seen.push(await found(theirs, other.key));
    // The worker keeps no context after a workspace's first run of the code; from the third run on, each
    // finds the mark of the one before. The other workspace's runs of the same code start clean.
    expect(seen).toEqual(['undefined', 'undefined', 'number', 'undefined', 'undefined', 'number']);
  });
});

describe('sandbox escape catalogue', () => {
  it.each(CATALOGUE.filter((attempt) => !attempt.needsHeapGuard))('$name', tryAttempt);
  describe.skipIf(!guarded)('past the heap guard', () => {
    it.each(CATALOGUE.filter((attempt) => attempt.needsHeapGuard))('$name', tryAttempt);
  });
});

async function tryAttempt(attempt: Attempt) {
  const id = await deployWorkflow(svc.admin, tenant.workspace.id, {
    blocks: [{ id: 'attempt', type: 'function', code: attempt.code, timeoutMs: attempt.timeoutMs ?? 1000 }],
  });
  const res = await execute(id, {});
  expect(res.status).toBe(200);
  const text = JSON.stringify(res.body);
  for (const secret of SENSITIVE) expect(text).not.toContain(secret);
  if ('output' in attempt.expect) {
    expect(res.body).toMatchObject({ success: true });
    expect(res.body.output.attempt).toEqual(attempt.expect.output);
  } else {
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/^Block "attempt" failed: /);
    expect(res.body.error).toMatch(attempt.expect.error);
  }
  // The same (single) worker serves the next execution: healthy, and no pollution carried over.
  const after = await execute(healthId, { n: 41 });
  expect(after.body).toMatchObject({ success: true, output: { health: { n: 42 } } });
  expect(after.body.output.health).toEqual({ ...(baseline as object), n: 42 });
}
