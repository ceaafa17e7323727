// runner/sandbox/prelude/console.ts: how values are printed to the task's log, and how the function's
// outcome (a value as JSON, or an error as text) is reported.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { run, error } = sandbox();

describe('prelude: console and outcome', () => {
  it('prints strings as they are and other values inspected', async () => {
    const outcome =
      await run(`console.log('s', 'q"', Symbol('k'), () => 1, function named() {}, new Map([[1, 2]]), new Set(['a']));
      console.warn({ big: 2n, f() {} });
      return null`);
    expect(outcome.logs).toEqual([
      's q" Symbol(k) [Function: (anonymous)] [Function: named] Map(1) [[1,2]] Set(1) ["a"]',
      '[warn] {"big":"2n","f":"[Function: f]"}',
    ]);
  });

  it('reports returned values that are not JSON data, and thrown values of every kind', async () => {
    expect(await error('return Symbol()')).toBe(
      'TypeError: Function returned a symbol, which is not JSON data',
    );
    expect(await error('return { toJSON() { throw new RangeError("no") } }')).toBe(
      'TypeError: Function returned a value that is not JSON data (RangeError: no)',
    );
    expect(await error("throw 'plain'")).toBe('plain');
    expect(await error('throw { code: 7 }')).toBe('{"code":7}');
    expect(await error("throw new Error('')")).toBe('Error');
  });

  it('writes again in the next task once a task filled its log', async () => {
    // The same code, so that the third run takes the context the second one filled (a key's first run
    // leaves none behind).
    const code = 'for (let i = 0; i < n; i++) console.log(i); return 1';
    const first = await run(code, { owner: 'o', scope: { n: 2000 } });
    expect(first.logs.at(-1)).toBe('[console output truncated]');
    await run(code, { owner: 'o', scope: { n: 2000 } });
    expect((await run(code, { owner: 'o', scope: { n: 1 } })).logs).toEqual(['0']);
  });
});
