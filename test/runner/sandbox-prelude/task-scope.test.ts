// runner/sandbox/prelude/task-scope.ts: each task gets its scope variables (read-only, identifiers only,
// never shadowing a global) and a one-shot entry; a warm context's global object is put back between tasks.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: the per-task scope', () => {
  it('defines only identifier keys that are not globals, read-only', async () => {
    const scope = { inputs: { a: 1 }, 'not-an-id': 2, JSON: 'shadow', toString: 'inherited' };
    const result = await value(
      `'use strict';
      let writable = true;
      try { inputs = 1 } catch { writable = false }
      return [inputs.a, typeof globalThis['not-an-id'], typeof JSON.parse, typeof toString, writable]`,
      { scope },
    );
    expect(result).toEqual([1, 'undefined', 'function', 'function', false]);
  });

  it('removes the entry before user code runs, the scope variables being the only globals added', async () => {
    expect(
      await value("return typeof globalThis.__wf_run__ + ':' + Object.keys(globalThis).join(',')", {
        scope: { x: 1 },
      }),
    ).toBe('undefined:x');
  });

  it('puts a warm context back between tasks: added globals dropped, replaced ones restored', async () => {
    const code = `const seen = [typeof globalThis.added, typeof atob, Object.getPrototypeOf(globalThis) !== null];
      globalThis.added = 1;
      atob = null;
      Object.setPrototypeOf(globalThis, null);
      return seen`;
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await value(code, { owner: 'w' }));
    expect(runs).toEqual([
      ['undefined', 'function', true],
      ['undefined', 'function', true],
      ['undefined', 'function', true],
    ]);
  });
});
