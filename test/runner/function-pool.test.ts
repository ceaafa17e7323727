// The function pool and its sandbox, through the pool's public surface: results and errors, the Web
// globals, escapes that must fail, time and memory limits, cancellation, and teardown.
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFunctionPool, type FunctionOutcome, type FunctionTask } from '../../runner/sandbox/pool.ts';
import { heapGuardLoads } from '../../runner/threads/heap-guard.ts';

// The fetch tests reach a local server, which the SSRF guard only lets through on the allow-list
// (test/runner/sandbox-fetch.test.ts covers the guard itself).
const pool = createFunctionPool({ minThreads: 2, maxThreads: 2, httpAllowList: ['127.0.0.1'] });
// One thread: consecutive tasks share a worker, which isolation and recovery tests rely on.
const solo = createFunctionPool({ minThreads: 1, maxThreads: 1 });
// Whether this Node's worker threads load the heap guard (npm install builds it where it can; CI insists).
const guarded = await heapGuardLoads();
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.all([pool.destroy(), solo.destroy()]);
  await new Promise((resolve) => server.close(resolve));
});

/** The local HTTP target of the fetch tests. */
async function answer(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (req.url === '/json')
    return res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
  if (req.url === '/bytes') return res.writeHead(200).end(Buffer.from([0, 1, 2, 250, 255]));
  if (req.url === '/redirect') return res.writeHead(302, { location: '/json' }).end();
  if (req.url === '/missing') return res.writeHead(404, { 'x-reason': 'gone' }).end('not here');
  const echo = {
    method: req.method,
    header: req.headers['x-test'] ?? null,
    type: req.headers['content-type'] ?? null,
  };
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ ...echo, body: body.toString() }));
}

function task(code: string, options: Partial<FunctionTask> = {}): FunctionTask {
  return { code, language: 'javascript', scope: {}, timeoutMs: 5000, ...options };
}

function run(code: string, options: Partial<FunctionTask> = {}): Promise<FunctionOutcome> {
  return pool.run(task(code, options));
}

async function value(code: string, options: Partial<FunctionTask> = {}): Promise<unknown> {
  const outcome = await run(code, options);
  if (!outcome.ok) throw new Error(`expected ok, got: ${outcome.error}`);
  return outcome.value;
}

async function error(code: string, options: Partial<FunctionTask> = {}): Promise<string> {
  const outcome = await run(code, options);
  if (outcome.ok) throw new Error(`expected a failure, got: ${JSON.stringify(outcome.value)}`);
  return outcome.error;
}

async function expectHealthy(target = pool): Promise<void> {
  expect(await target.run(task('return inputs.n + 1', { scope: { inputs: { n: 41 } } }))).toMatchObject({
    ok: true,
    value: 42,
  });
}

describe('results', () => {
  it('returns JSON data, with await and the scope variables', async () => {
    const scope = { inputs: { name: 'Ada' }, blocks: { greet: { message: 'hi' } }, loop: { index: 2 } };
    const code = `await null;
      return { text: blocks.greet.message + ' ' + inputs.name, index: loop.index, when: new Date(0), list: [1, 'x', null] }`;
    expect(await value(code, { scope })).toEqual({
      text: 'hi Ada',
      index: 2,
      when: '1970-01-01T00:00:00.000Z',
      list: [1, 'x', null],
    });
  });

  it('turns undefined into null and keeps JSON semantics for nested values', async () => {
    expect(await value('return undefined')).toBeNull();
    expect(await value('')).toBeNull();
    expect(await value('return { a: undefined, f() {}, n: NaN, arr: [undefined] }')).toEqual({
      n: null,
      arr: [null],
    });
  });

  it('fails clearly for values that are not JSON data', async () => {
    expect(await error('return () => 1')).toMatch(/returned a function, which is not JSON data/);
    expect(await error('return Symbol("s")')).toMatch(/returned a symbol, which is not JSON data/);
    expect(await error('return 10n')).toMatch(/not JSON data.*BigInt/);
    expect(await error('const o = {}; o.self = o; return o')).toMatch(/not JSON data.*circular/i);
  });

  it('reports thrown errors by name and message, and other thrown values as they are', async () => {
    expect(await error("throw new Error('boom')")).toBe('Error: boom');
    expect(await error("await null; throw new TypeError('bad')")).toBe('TypeError: bad');
    expect(await error("throw 'plain'")).toBe('plain');
    expect(await error('throw { code: 7 }')).toBe('{"code":7}');
    expect(await error('return missing')).toBe('ReferenceError: missing is not defined');
  });

  it('makes scope variables read-only and skips keys that are not identifiers', async () => {
    const scope = { inputs: { n: 1 }, 'not-valid': 1, fetch: 'shadow' };
    expect(await value('inputs = 5; return inputs', { scope })).toEqual({ n: 1 });
    expect(await error("'use strict'; inputs = 5", { scope })).toMatch(
      /^TypeError: Cannot assign to read only/,
    );
    expect(await value("return [typeof globalThis['not-valid'], typeof fetch]", { scope })).toEqual([
      'undefined',
      'function',
    ]);
  });

  it('rejects a scope that is not JSON data, or a bad time limit, without running anything', async () => {
    const outcome = await pool.run(task('return 1', { scope: { inputs: { n: 1n } } }));
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/scope is not JSON data/) });
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await error('return 1', { timeoutMs })).toMatch(/time limit must be/);
    }
  });

  it('reports syntax errors, and code that tries to close the function wrapper', async () => {
    expect(await error('return (')).toMatch(/^SyntaxError/);
    expect(await error('}); globalThis.escaped = 1; (async function () {')).toMatch(/^SyntaxError/);
  });

  it('keeps user frames only in stack traces', async () => {
    const stack = (await value("const e = new Error('x'); return e.stack")) as string;
    expect(stack).toMatch(/^Error: x\n {4}at function\.js:1:\d+/);
    expect(stack).not.toMatch(/node:|runner\/|piscina|sandbox-prelude/);
  });
});

describe('TypeScript', () => {
  it('strips type annotations', async () => {
    const scope = { inputs: { n: 21 } };
    expect(await value('const x: number = inputs.n; return x * 2', { language: 'typescript', scope })).toBe(
      42,
    );
    const code = `interface Point { x: number; y: number }
      function sum<T extends Point>(points: T[]): number { return points.reduce((s, p) => s + p.x + p.y, 0) }
      const points = [{ x: 1, y: 2 }] as Point[];
      return sum(points satisfies Point[])`;
    expect(await value(code, { language: 'typescript' })).toBe(3);
  });

  it('reports TypeScript that needs more than stripping, and keeps the language apart in the cache', async () => {
    expect(await error('enum A { B }', { language: 'typescript' })).toMatch(/^SyntaxError.*enum/);
    const code = 'const x: number = 1; return x';
    expect(await error(code)).toMatch(/^SyntaxError/);
    expect(await value(code, { language: 'typescript' })).toBe(1);
    expect(await error(code)).toMatch(/^SyntaxError/);
  });
});

describe('isolation', () => {
  it('gives every execution without an owner a fresh context', async () => {
    const first = await solo.run(
      task('globalThis.leak = 1; Object.prototype.polluted = 1; Array.prototype.push = null'),
    );
    expect(first.ok).toBe(true);
    const second = await solo.run(task('return [typeof leak, ({}).polluted ?? null, typeof [].push]'));
    expect(second).toMatchObject({ ok: true, value: ['undefined', null, 'function'] });
  });

  // Code a worker has run before, for the same owner, may run in the context its last run left: a
  // built-in changed in place (a prototype's method) shows that it did.
  const MARK = 'const before = typeof [].mark; Array.prototype.mark = 1;';

  /** Three runs of the code for one owner on one worker; the second (kept warm) with `inputs[flag]` set. */
  async function warmRuns(code: string, owner: string, flag: string): Promise<FunctionOutcome[]> {
    const runs: FunctionOutcome[] = [];
    for (const n of [1, 2, 3]) {
      runs.push(await solo.run(task(code, { owner, scope: { inputs: { n, [flag]: n === 2 } } })));
    }
    return runs;
  }

  it('reuses a warm context for the same code and owner only, its global object put back', async () => {
    const code = `${MARK} const hidden = Symbol.for('hidden');
      const seen = [typeof leak, typeof fetch, typeof URL, typeof stale, typeof counter, typeof globalThis[hidden]];
      globalThis.leak = inputs.n; fetch = 1; delete globalThis.URL; counter = 1;
      Object.defineProperty(globalThis, hidden, { value: 1, configurable: true });
      return [before, ...seen]`;
    // leak, fetch, URL, stale, counter, hidden: as a run that finds the global object as it should be.
    const clean = ['undefined', 'function', 'function', 'undefined', 'undefined', 'undefined'];
    const runs = [];
    for (const [n, owner] of [
      [1, 'ws-a'],
      [2, 'ws-a'],
      [3, 'ws-a'],
      [4, 'ws-b'],
      [5, 'ws-a'],
    ] as const) {
      const scope = n === 2 ? { inputs: { n }, stale: true } : { inputs: { n } };
      runs.push(await solo.run(task(code, { owner, scope })));
    }
    // First sight of the code: a fresh context, not kept. Second: fresh, kept. Third: the warm one,
    // without the second's globals or scope. Another owner: a context of its own.
    expect(runs.map((r) => r.ok && r.value)).toEqual([
      ['undefined', ...clean],
      ['undefined', 'undefined', 'function', 'function', 'boolean', 'undefined', 'undefined'],
      ['number', ...clean],
      ['undefined', ...clean],
      ['number', ...clean],
    ]);
    // Other code of the same owner, and the same code without an owner, never see it.
    expect(await solo.run(task('return typeof [].mark', { owner: 'ws-a' }))).toMatchObject({
      value: 'undefined',
    });
    for (let i = 0; i < 2; i++) {
      expect(await solo.run(task(code, { scope: { inputs: { n: i } } }))).toMatchObject({
        value: ['undefined', ...clean],
      });
    }
  });

  it('shares a warm context between runs of one source, whatever values were substituted into it', async () => {
    const source = `${MARK} return [before, <start.n>]`;
    const run = (n: number, from = source) =>
      solo.run(task(source.replace('<start.n>', String(n)), { owner: 'ws-source', source: from }));
    const runs = [];
    for (const n of [1, 2, 3, 4]) runs.push(await run(n));
    expect(runs.map((r) => r.ok && r.value)).toEqual([
      ['undefined', 1],
      ['undefined', 2],
      ['number', 3],
      ['number', 4],
    ]);
    // The same code given as another source is another function.
    expect(await run(5, 'other source')).toMatchObject({ value: ['undefined', 5] });
  });

  // Whether each run found the mark; with `big`, the run also leaves 100 MB on Array.prototype.
  const marked = async (owner: string, big = false) => {
    // repeat() answers a rope; reading a character flattens it into one 100 MB string.
    const code = `${MARK} if (inputs.big) { const s = 'x'.repeat(100 * 2 ** 20); s.charCodeAt(1); Array.prototype.big = s }
      return before`;
    const outcome = await solo.run(task(code, { owner, scope: { inputs: { big } } }));
    return outcome.ok ? outcome.value : outcome.error;
  };

  it('keeps at most 16 warm contexts per worker, and retires each after 1,000 runs', async () => {
    // 17 owners, each run twice (the second run keeps its context): the first owner's is the one dropped.
    for (let i = 0; i <= 16; i++) for (let j = 0; j < 2; j++) await marked(`lru-${i}`);
    expect([await marked('lru-1'), await marked('lru-0')]).toEqual(['number', 'undefined']);

    // Made by the second run, a context serves 1,000 runs: the 1,002nd starts in a new one.
    const fresh: number[] = [];
    for (let i = 1; i <= 1003; i++) if ((await marked('uses')) === 'undefined') fresh.push(i);
    expect(fresh).toEqual([1, 2, 1002]);
  });

  it('drops a context whose run did not end cleanly, or whose globals cannot be put back', async () => {
    const code = `${MARK}
      if (inputs.how === 'wait') await new Promise((resolve) => setTimeout(resolve, 10_000));
      if (inputs.how === 'pending') setTimeout(() => {}, 10_000);
      if (inputs.how === 'pin') Object.defineProperty(globalThis, 'pinned', { value: 1 });
      if (inputs.how === 'pin-scope') Object.defineProperty(globalThis, 'inputs', { value: 'mine', configurable: false });
      if (inputs.how === 'freeze') Object.preventExtensions(globalThis);
      if (inputs.how === 'throw') throw new Error('thrown');
      return [before, typeof pinned, typeof inputs]`;
    const once = (how: string) =>
      solo.run(task(code, { owner: 'ws-drop', scope: { inputs: { how } }, timeoutMs: 300 }));
    const fresh = { ok: true, value: ['undefined', 'undefined', 'object'] };
    expect(await once('')).toMatchObject(fresh);
    expect(await once('')).toMatchObject(fresh);
    for (const how of ['wait', 'pending', 'pin', 'pin-scope', 'freeze']) {
      // Each runs warm (the run before kept its context), then leaves its context unfit for another.
      const spoiled = await once(how);
      if (how === 'wait') expect(spoiled).toMatchObject({ ok: false, error: /time limit/ });
      else
        expect(spoiled).toMatchObject({
          ok: true,
          value: ['number', expect.any(String), expect.any(String)],
        });
      expect(await once('')).toMatchObject(fresh);
    }
    // A run that throws ended by itself: its context serves the next.
    expect(await once('throw')).toMatchObject({ ok: false, error: 'Error: thrown' });
    expect(await once('')).toMatchObject({ ok: true, value: ['number', 'undefined', 'object'] });
  });

  it('reaches no host object when an earlier run replaced the built-ins the sandbox uses', async () => {
    // The second run (kept warm) replaces built-ins the sandbox's set-up and Web globals might call; each
    // replacement probes what it is called with for a host object. The third run, in that context, uses
    // the globals: no host object may reach a replacement.
    const code = `
      const probe = (v) => { try { return v.constructor.constructor('return typeof process')() } catch { return 'threw' } };
      const log = Array.prototype.log ?? (Array.prototype.log = { calls: 0, found: '' });
      if (inputs.trap) {
        const apply = Reflect.apply;
        const record = (v) => {
          if ((typeof v === 'object' && v !== null) || typeof v === 'function') {
            const found = probe(v);
            if (found !== 'undefined' && found !== 'threw') log.found += found;
          }
        };
        const trap = (original) => function () {
          log.calls++;
          record(this);
          for (let i = 0; i < arguments.length; i++) record(arguments[i]);
          return apply(original, this, arguments);
        };
        const targets = [[Reflect, ['apply', 'defineProperty', 'deleteProperty', 'ownKeys', 'getPrototypeOf', 'setPrototypeOf', 'isExtensible', 'getOwnPropertyDescriptor']],
          [Object, ['keys', 'defineProperty', 'getOwnPropertyNames', 'freeze']], [JSON, ['parse', 'stringify']],
          [Function.prototype, ['call', 'apply', 'bind']], [Promise.prototype, ['then', 'catch', 'finally']], [Promise, ['resolve']],
          [Set.prototype, ['has', 'add']], [Map.prototype, ['get', 'set', 'delete', 'has']], [RegExp.prototype, ['exec', 'test']],
          [Array.prototype, ['push', 'map', 'join', 'slice', Symbol.iterator]], [String.prototype, ['slice', 'replace', 'split']],
          [Uint8Array.prototype, ['set', 'subarray']], [Math, ['max', 'min']]];
        for (let t = 0; t < targets.length; t++) {
          const owner = targets[t][0], names = targets[t][1];
          for (let i = 0; i < names.length; i++) owner[names[i]] = trap(owner[names[i]]);
        }
      }
      console.log('hello', { a: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1));
      const text = await (await fetch('data:text/plain,hi')).text();
      const query = new URL('http://x/?q=1').searchParams.get('q');
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode('x'));
      return [inputs.n, text, query, digest.byteLength, crypto.randomUUID().length, log.calls > 0, log.found]`;
    const runs = await warmRuns(code, 'ws-hostile', 'trap');
    expect(runs[2]).toMatchObject({
      ok: true,
      value: [3, 'hi', '1', 32, 36, true, ''],
      logs: ['hello {"a":1}'],
    });
    await expectHealthy(solo);
  });

  it('gives each run its own read-only scope even after an earlier run polluted property descriptors', async () => {
    const code = `if (inputs.pollute) {
        Object.defineProperty(Object.prototype, 'get', { get() { return undefined }, configurable: true });
        Object.prototype.value = 'polluted';
        Object.prototype.writable = true;
      }
      const leaked = Object.hasOwn(globalThis, 'leak');
      globalThis.leak = 1;
      const own = Object.getOwnPropertyDescriptor(globalThis, 'inputs');
      return [inputs.n, Object.hasOwn(own, 'value') && own.value.n, own.writable, leaked]`;
    const runs = await warmRuns(code, 'ws-pollute', 'pollute');
    expect(runs.map((r) => r.ok && r.value)).toEqual([
      [1, 1, false, false],
      [2, 2, false, false],
      [3, 3, false, false],
    ]);
  });

  // Last of the warm-context tests: the dropped 100 MB stays in the heap until V8 collects it, and until
  // then the worker keeps no warm context.
  it('drops every warm context once the heap passes three quarters of the memory limit (128 MB here)', async () => {
    expect([await marked('lru-1'), await marked('heap'), await marked('heap')]).toEqual([
      'number',
      'undefined',
      'undefined',
    ]);
    expect(await marked('heap', true)).toBe('number');
    expect([await marked('heap'), await marked('lru-1')]).toEqual(['undefined', 'undefined']);
  });

  it('runs cached code against each execution own scope', async () => {
    const code = 'return inputs.n * 2';
    const results = await Promise.all(
      [1, 2, 3].map((n) => solo.run(task(code, { scope: { inputs: { n } } }))),
    );
    expect(results.map((r) => r.ok && r.value)).toEqual([2, 4, 6]);
  });
});

describe('globals', () => {
  it('provides the Web globals and nothing from Node', async () => {
    const web = [
      'fetch',
      'URL',
      'URLSearchParams',
      'Headers',
      'Request',
      'Response',
      'TextEncoder',
      'TextDecoder',
      'atob',
      'btoa',
      'structuredClone',
      'setTimeout',
      'clearTimeout',
      'queueMicrotask',
    ];
    const types = await value(`return ${JSON.stringify(web)}.map((name) => typeof globalThis[name])`);
    expect(types).toEqual(web.map(() => 'function'));
    const objects = await value(
      'return [typeof crypto.subtle, typeof crypto.randomUUID, typeof JSON, typeof Math]',
    );
    expect(objects).toEqual(['object', 'function', 'object', 'object']);
    const node = ['require', 'process', 'Buffer', 'module', 'exports', '__dirname', 'global', 'setImmediate'];
    const absent = await value(`return ${JSON.stringify(node)}.map((name) => typeof globalThis[name])`);
    expect(absent).toEqual(node.map(() => 'undefined'));
    const removed = ['FinalizationRegistry', 'SharedArrayBuffer', 'WebAssembly'];
    expect(await value(`return ${JSON.stringify(removed)}.map((name) => typeof globalThis[name])`)).toEqual(
      removed.map(() => 'undefined'),
    );
  });

  it('captures console output as strings', async () => {
    const outcome = await run(`console.log('hi', 1, { a: [1, 2] }, 3n, undefined, null);
      console.info('i'); console.warn('w'); console.error(new TypeError('e')); console.debug('d');
      const cyclic = {}; cyclic.self = cyclic; console.log(cyclic);
      return 1`);
    expect(outcome.logs).toEqual([
      'hi 1 {"a":[1,2]} 3n undefined null',
      '[info] i',
      '[warn] w',
      expect.stringMatching(/^\[error\] TypeError: e\n {4}at function\.js:2/),
      '[debug] d',
      '{"self":"[Circular]"}',
    ]);
  });

  it('caps console output in lines and size', async () => {
    const many = await run("for (let i = 0; i < 5000; i++) console.log('line', i); return 1");
    expect(many.ok).toBe(true);
    expect(many.logs.length).toBe(1001);
    expect(many.logs.at(-1)).toBe('[console output truncated]');
    const long = await run("console.log('x'.repeat(100000)); return 1");
    expect(long.logs[0]?.length).toBeLessThan(10000);
  });

  it('runs timers in order, clears them, and does not let pending ones outlive the task', async () => {
    const order = await value(`const seen = [];
      setTimeout(() => seen.push('b'), 5);
      setTimeout(() => seen.push('a'), 0);
      const cancelled = setTimeout(() => seen.push('never'), 1);
      clearTimeout(cancelled);
      let ticks = 0;
      await new Promise((resolve) => { const id = setInterval(() => { if (++ticks === 3) { clearInterval(id); resolve(); } }, 1); });
      await new Promise((resolve) => setTimeout(resolve, 10));
      queueMicrotask(() => seen.push('micro'));
      await null;
      return [...seen, ticks]`);
    expect(order).toEqual(['a', 'b', 'micro', 3]);
    const early = await run(
      "setTimeout(() => console.log('late'), 0); setTimeout(() => {}, 60000); return 'done'",
    );
    expect(early).toMatchObject({ ok: true, value: 'done', logs: [] });
  });

  it('fails the function when a timer callback throws', async () => {
    expect(await error("await new Promise(() => setTimeout(() => { throw new Error('in timer') }, 1))")).toBe(
      'Error: in timer',
    );
  });

  it('parses and edits URLs and query strings', async () => {
    const code = `const url = new URL('/a b/c?x=1&y=two+words#top', 'https://user:pw@example.com:8443');
      url.searchParams.append('z', 'ä&=');
      const before = url.href;
      url.search = '?q=1';
      url.hash = '';
      const params = new URLSearchParams({ b: '2', a: '1' });
      params.sort();
      let invalid = null;
      try { new URL('not a url') } catch (e) { invalid = e.name }
      return [before, url.href, url.searchParams.get('q'), url.origin, url.port, params.toString(), invalid,
        URL.canParse('http://x'), new URLSearchParams('?a=1&a=2').getAll('a')]`;
    expect(await value(code)).toEqual([
      'https://user:pw@example.com:8443/a%20b/c?x=1&y=two+words&z=%C3%A4%26%3D#top',
      'https://user:pw@example.com:8443/a%20b/c?q=1',
      '1',
      'https://example.com:8443',
      '8443',
      'a=1&b=2',
      'TypeError',
      true,
      ['1', '2'],
    ]);
  });

  it('encodes and decodes text and base64', async () => {
    const code = `const bytes = new TextEncoder().encode('héllo €😀');
      let fatal = null;
      try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])) } catch (e) { fatal = e.name }
      let invalid = null;
      try { atob('***') } catch (e) { invalid = e.name }
      return [Array.from(bytes).length, new TextDecoder().decode(bytes), new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62])),
        fatal, btoa('hello'), atob(' aGVs bG8= '), invalid]`;
    expect(await value(code)).toEqual([
      14,
      'héllo €😀',
      'a\uFFFDb',
      'TypeError',
      'aGVsbG8=',
      'hello',
      'InvalidCharacterError',
    ]);
  });

  it('clones structured values', async () => {
    const code = `const source = { when: new Date(5), map: new Map([[1, { x: 1 }]]), set: new Set([1]), bytes: new Uint8Array([1, 2]) };
      source.self = source;
      const copy = structuredClone(source);
      let refused = null;
      try { structuredClone(() => 1) } catch (e) { refused = e.name }
      return [copy !== source, copy.self === copy, copy.when.getTime(), copy.map.get(1).x, copy.set.has(1),
        Array.from(copy.bytes), copy.map.get(1) !== source.map.get(1), refused]`;
    expect(await value(code)).toEqual([true, true, 5, 1, true, [1, 2], true, 'DataCloneError']);
  });

  it('provides Web Crypto', async () => {
    const code = `const enc = new TextEncoder();
      const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
      const digest = hex(await crypto.subtle.digest('SHA-256', enc.encode('abc')));
      const hmac = await crypto.subtle.importKey('raw', enc.encode('secret'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
      const signature = await crypto.subtle.sign('HMAC', hmac, enc.encode('message'));
      const verified = await crypto.subtle.verify('HMAC', hmac, signature, enc.encode('message'));
      const aes = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, aes, enc.encode('secret text'));
      const opened = new TextDecoder().decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, aes, sealed));
      const jwk = await crypto.subtle.exportKey('jwk', aes);
      let failure = null;
      try { await crypto.subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, aes, sealed) } catch (e) { failure = e.name }
      return [digest, hex(signature).length, verified, aes instanceof CryptoKey, aes.algorithm, aes.usages, opened, jwk.kty,
        /^[0-9a-f-]{36}$/.test(crypto.randomUUID()), failure]`;
    expect(await value(code)).toEqual([
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      64,
      true,
      true,
      { name: 'AES-GCM', length: 256 },
      ['encrypt', 'decrypt'],
      'secret text',
      'oct',
      true,
      'OperationError',
    ]);
  });

  it('builds Requests and Responses', async () => {
    const code = `const response = Response.json({ a: 1 }, { status: 201, headers: { 'X-One': '1' } });
      const copy = response.clone();
      const headers = new Headers([['b', '2'], ['A', '1']]);
      headers.append('a', '3');
      const request = new Request('https://example.com/x', { method: 'post', body: 'hi' });
      return [response.status, response.ok, response.headers.get('content-type'), await response.json(), await copy.text(),
        response.bodyUsed, [...headers], request.method, request.headers.get('content-type'), await request.text()]`;
    expect(await value(code)).toEqual([
      201,
      true,
      'application/json',
      { a: 1 },
      '{"a":1}',
      true,
      [
        ['a', '1, 3'],
        ['b', '2'],
      ],
      'POST',
      'text/plain;charset=UTF-8',
      'hi',
    ]);
  });
});

describe('fetch', () => {
  it('fetches JSON from a local server', async () => {
    expect(
      await value('const r = await fetch(inputs.url); return await r.json()', {
        scope: { inputs: { url: `${base}/json` } },
      }),
    ).toEqual({
      hello: 'world',
    });
  });

  it('sends method, headers and body, and exposes status, headers, bytes and redirects', async () => {
    const code = `const echo = await (await fetch(base + '/echo', { method: 'PUT', headers: { 'X-Test': 'yes' }, body: JSON.stringify({ a: 1 }) })).json();
      const missing = await fetch(base + '/missing');
      const bytes = new Uint8Array(await (await fetch(new URL('/bytes', base))).arrayBuffer());
      const redirected = await fetch(base + '/redirect');
      return [echo, missing.status, missing.ok, missing.headers.get('x-reason'), await missing.text(), Array.from(bytes),
        redirected.redirected, redirected.url.endsWith('/json'), await redirected.json()]`;
    expect(await value(code, { scope: { base } })).toEqual([
      { method: 'PUT', header: 'yes', type: 'text/plain;charset=UTF-8', body: '{"a":1}' },
      404,
      false,
      'gone',
      'not here',
      [0, 1, 2, 250, 255],
      true,
      true,
      { hello: 'world' },
    ]);
  });

  it('rejects with a TypeError when the request fails', async () => {
    const code =
      "try { await fetch('http://127.0.0.1:1/') } catch (e) { return [e instanceof TypeError, e.message] }";
    expect(await value(code)).toEqual([true, expect.stringMatching(/^fetch failed/)]);
    expect(await error("await fetch('not a url')")).toMatch(/^TypeError: Invalid URL/);
  });
});

describe('escapes', () => {
  // Evaluates inside the sandbox: the Function constructor reachable from a value, asked for `process`.
  const probe = `const probe = (v) => v.constructor.constructor('return typeof process')();`;

  it('finds no process through the global object or the Function constructor', async () => {
    expect(await value("return typeof this.constructor.constructor('return this')().process")).toBe(
      'undefined',
    );
    expect(await error("return this.constructor.constructor('return process')()")).toBe(
      'ReferenceError: process is not defined',
    );
    expect(await value('return typeof globalThis.process')).toBe('undefined');
    expect(await value('return typeof (function () { return this })().process')).toBe('undefined');
    expect(await error("return Function('return process')()")).toBe('ReferenceError: process is not defined');
    expect(await error("return require('fs')")).toBe('ReferenceError: require is not defined');
    expect(await value("return [].constructor.constructor('return typeof process')()")).toBe('undefined');
    expect(await value("return eval('typeof process')")).toBe('undefined');
  });

  it('refuses dynamic import, with an error of the sandbox realm', async () => {
    expect(await error("return await import('node:fs')")).toBe(
      'TypeError: import() is not available in function code',
    );
    expect(await error('return await Function("return import(\'node:fs\')")()')).toMatch(
      /import\(\) is not available/,
    );
    expect(await error('return await eval("import(\'node:child_process\')")')).toMatch(
      /import\(\) is not available/,
    );
    const caught = await value(`${probe} try { await import('node:fs') } catch (e) { return probe(e) }`);
    expect(caught).toBe('undefined');
  });

  it('reaches no host object through the injected globals', async () => {
    const reachable = [
      'fetch',
      'console',
      'console.log',
      'setTimeout',
      'crypto',
      'crypto.subtle',
      'crypto.subtle.digest',
      'crypto.getRandomValues',
      'URL',
      'new URL("http://x")',
      'new URL("http://x").searchParams',
      'Headers',
      'Response',
      'new Response("x")',
      'TextEncoder',
      'new TextEncoder().encode("x")',
      'structuredClone',
      'atob',
      'inputs',
      'inputs.list',
      'fetch(base + "/json")',
      'await fetch(base + "/json")',
      '(await fetch(base + "/json")).headers',
      'crypto.subtle.digest("SHA-256", new Uint8Array(1))',
      'await crypto.subtle.digest("SHA-256", new Uint8Array(1))',
      'await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign"])',
      '(await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign"])).algorithm',
    ];
    const code = `${probe} return [${reachable.map((expr) => `probe(${expr})`).join(', ')}]`;
    const scope = { base, inputs: { list: [1] } };
    expect(await value(code, { scope })).toEqual(reachable.map(() => 'undefined'));
  });

  it('reaches no host object through errors raised by the injected globals', async () => {
    const code = `${probe} const errors = [];
      const attempt = async (f) => { try { await f() } catch (e) { errors.push(e) } };
      await attempt(() => fetch('http://127.0.0.1:1/'));
      await attempt(() => fetch('bad url'));
      await attempt(() => new URL('bad url'));
      await attempt(() => atob('***'));
      await attempt(() => crypto.subtle.digest('NOPE', new Uint8Array(1)));
      await attempt(() => crypto.subtle.importKey('raw', new Uint8Array(1), 'NOPE', false, []));
      await attempt(() => crypto.getRandomValues(new Uint8Array(70000)));
      await attempt(() => new Response('x', { status: 99 }));
      await attempt(() => new TextDecoder('latin2'));
      return [errors.length, errors.map(probe)]`;
    expect(await value(code)).toEqual([9, Array(9).fill('undefined')]);
  });

  it('reaches no host object through a stack overflow raised on entry to a host function', async () => {
    const code = `${probe} const caught = [];
      function deep() { try { deep() } catch { try { crypto.randomUUID(); console.log('x') } catch (e) { caught.push(e) } } }
      deep();
      return caught.length === 0 ? 'none' : [...new Set(caught.map(probe))]`;
    const result = await value(code);
    expect(result === 'none' || JSON.stringify(result) === '["undefined"]').toBe(true);
  });

  it('keeps stack-trace call sites and callers out of reach', async () => {
    const code = `Error.prepareStackTrace = (error, sites) => sites;
      const stack = new Error('x').stack;
      function caller() { return caller.caller }
      const fromTimer = await new Promise((resolve) => setTimeout(function tick() { resolve(tick.caller) }, 0));
      return [typeof stack, caller() === null || typeof caller() === 'function', fromTimer]`;
    expect(await value(code)).toEqual(['string', true, null]);
  });
});

describe('limits', () => {
  it('stops a synchronous infinite loop', async () => {
    expect(await error('while (true) {}', { timeoutMs: 300 })).toBe(
      'Function exceeded its time limit of 300 ms',
    );
    await expectHealthy();
  });

  it('stops endless promise chains and async recursion', async () => {
    expect(await error('for (;;) await null', { timeoutMs: 300 })).toBe(
      'Function exceeded its time limit of 300 ms',
    );
    await expectHealthy();
    const recursion = 'async function f() { await null; return f() } await f()';
    expect(await error(recursion, { timeoutMs: 300 })).toBe('Function exceeded its time limit of 300 ms');
    await expectHealthy();
    // Without a yield, the recursion is synchronous and ends on the stack limit first.
    expect(await error('async function f() { await f() } await f()', { timeoutMs: 300 })).toBe(
      'RangeError: Maximum call stack size exceeded',
    );
    await expectHealthy();
  });

  it('stops a timer that re-arms itself forever', async () => {
    const code = 'await new Promise(() => { const tick = () => setTimeout(tick, 0); tick() })';
    expect(await error(code, { timeoutMs: 300 })).toBe('Function exceeded its time limit of 300 ms');
    const interval = 'setInterval(() => {}, 1); await new Promise(() => {})';
    expect(await error(interval, { timeoutMs: 300 })).toBe('Function exceeded its time limit of 300 ms');
    await expectHealthy();
  });

  it('fails at once when the function awaits something nothing will settle', async () => {
    expect(await error('await new Promise(() => {})')).toMatch(/never finished/);
  });

  it('stops a heap allocation bomb', async () => {
    const bomb = 'const a = []; for (;;) a.push(new Array(1e6).fill(1))';
    expect(await error(bomb)).toBe('Function exceeded its memory limit of 128 MB');
    await expectHealthy();
  });

  // Without the heap guard (runner/native/heap-guard.cc), each of these aborts the whole test process
  // with V8's "Reached heap limit": one young object of any size is allowed, and Node grants a worker
  // only 16 MB past its limit at the GC that moves it to the old generation. CI builds the guard.
  it.skipIf(!guarded)(
    'stops a function whose one allocation overshoots the limit by far',
    async () => {
      const overshoots = [
        // Returns at once: the worker itself sees the raised limit and leaves the answer to the pool.
        'const a = new Array(3e7); const b = new Array(3e7); return a.length + b.length',
        // fill() copies the 240 MB of elements to doubles while the original is still alive.
        'return new Array(3e7).fill(1.5).length',
        'const a = []; for (;;) a.push(new Array(2e7))',
      ];
      for (const code of overshoots) {
        // These attempts are meant to reach the heap guard, not the clock: on a busy machine, filling
        // 240 MB took longer than the default 5 s (CI's embedded pass, load about 12).
        expect(await error(code, { timeoutMs: 30_000 })).toBe('Function exceeded its memory limit of 128 MB');
        await expectHealthy();
      }
    },
    120_000,
  );

  it('stops an ArrayBuffer allocation bomb, which lives outside the V8 heap', async () => {
    const bomb = 'const a = []; for (;;) a.push(new Uint8Array(1e7).fill(1))';
    expect(await error(bomb)).toBe('Function exceeded its memory limit of 128 MB');
    await expectHealthy();
  });

  it('leaves other executions unharmed by a bomb', async () => {
    const bomb = task('const a = []; for (;;) a.push(new Array(1e6).fill(1))');
    const normal = task('await new Promise((r) => setTimeout(r, 20)); return inputs.n * 2', {
      scope: { inputs: { n: 4 } },
    });
    const [exploded, fine] = await Promise.all([pool.run(bomb), pool.run(normal)]);
    expect(exploded).toMatchObject({ ok: false, error: 'Function exceeded its memory limit of 128 MB' });
    expect(fine).toMatchObject({ ok: true, value: 8 });
    // With a single thread, the next task waits for the bomb and runs on the replacement worker.
    const [soloExploded, soloFine] = await Promise.all([solo.run(bomb), solo.run(normal)]);
    expect(soloExploded.ok).toBe(false);
    expect(soloFine).toMatchObject({ ok: true, value: 8 });
  });

  it('leaves other executions unharmed by a loop that never returns, whose worker is stopped', async () => {
    const loop = task('while (true) {}', { timeoutMs: 300 });
    const normal = task('await new Promise((r) => setTimeout(r, 20)); return inputs.n * 2', {
      scope: { inputs: { n: 4 } },
      timeoutMs: 300,
    });
    const [stuck, fine] = await Promise.all([pool.run(loop), pool.run(normal)]);
    expect(stuck).toMatchObject({ ok: false, error: 'Function exceeded its time limit of 300 ms' });
    expect(fine).toMatchObject({ ok: true, value: 8 });
    // One thread: the next task waits for the loop, then runs on the replacement worker with its whole
    // limit, however long that worker took to start.
    const [soloStuck, soloFine, soloAfter] = await Promise.all([
      solo.run(loop),
      solo.run(normal),
      solo.run(normal),
    ]);
    expect(soloStuck).toMatchObject({ ok: false, error: 'Function exceeded its time limit of 300 ms' });
    expect([soloFine, soloAfter]).toMatchObject([
      { ok: true, value: 8 },
      { ok: true, value: 8 },
    ]);
  });

  it('terminates a worker stuck in native code', async () => {
    // A typed array's sort runs to completion inside V8 (seconds for 30M doubles) and never returns to the
    // worker's event loop, so the pool stops the worker. The array is filled by copying (fast) so that the
    // sort starts well within the time limit. Its own pool, with room for the 240 MB array.
    const roomy = createFunctionPool({ minThreads: 1, maxThreads: 1, memoryMb: 512 });
    const code = `const a = new Float64Array(3e7);
      for (let i = 0; i < 65536; i++) a[i] = Math.imul(i, 2654435761);
      for (let k = 65536; k < a.length; k *= 2) a.copyWithin(k, 0, k);
      a.sort();
      return 'sorted'`;
    try {
      expect(await roomy.run(task(code, { timeoutMs: 500 }))).toMatchObject({
        ok: false,
        error: 'Function exceeded its time limit of 500 ms',
      });
      await expectHealthy(roomy);
    } finally {
      await roomy.destroy();
    }
  });
});

describe('cancellation and pool', () => {
  it("stops a running task when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const running = pool.run(task('while (true) {}', { timeoutMs: 60_000 }), controller.signal);
    setImmediate(() => controller.abort());
    expect(await running).toMatchObject({ ok: false, error: 'Function execution was cancelled' });
    expect(await pool.run(task('return 1'), AbortSignal.abort())).toMatchObject({
      ok: false,
      error: 'Function execution was cancelled',
    });
    await expectHealthy();
  });

  it('queues tasks beyond the thread count and cancels queued ones', async () => {
    const blocker = solo.run(task('await new Promise((r) => setTimeout(r, 50)); return 0'));
    const controller = new AbortController();
    const queued = solo.run(task('return 1'), controller.signal);
    controller.abort();
    const many = await Promise.all(Array.from({ length: 40 }, (_, n) => solo.run(task(`return ${n}`))));
    expect(await blocker).toMatchObject({ ok: true, value: 0 });
    expect(await queued).toMatchObject({ ok: false, error: 'Function execution was cancelled' });
    expect(many.map((outcome) => outcome.ok && outcome.value)).toEqual(
      Array.from({ length: 40 }, (_, n) => n),
    );
  });

  it('rejects new work once destroyed, and leaves no thread behind', async () => {
    const threadsBefore = osThreadCount();
    const short = createFunctionPool({ minThreads: 1, maxThreads: 2 });
    expect(await short.run(task('return 1'))).toMatchObject({ ok: true, value: 1 });
    const waiting = Promise.all([short.run(task('return 2')), short.run(task('return 3'))]);
    expect(await waiting).toMatchObject([
      { ok: true, value: 2 },
      { ok: true, value: 3 },
    ]);
    await short.destroy();
    await expect(short.run(task('return 1'))).rejects.toThrow(/destroyed/);
    if (threadsBefore !== null) expect(osThreadCount()).toBeLessThanOrEqual(threadsBefore);
  });
});

/** Threads of this process (Linux), which include worker threads. */
function osThreadCount(): number | null {
  return existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : null;
}
