// runner/sandbox/prelude/timers.ts: timers run their callbacks with their arguments, in order, and each task
// starts with its own timer ids.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value, error } = sandbox();

describe('prelude: timers', () => {
  it('passes arguments to callbacks and clears intervals from inside them', async () => {
    const result = await value(`const seen = [];
      await new Promise((resolve) => setTimeout((a, b) => { seen.push(a + b); resolve(); }, 1, 'x', 'y'));
      let n = 0;
      await new Promise((resolve) => { const id = setInterval((step) => { n += step; if (n >= 6) { clearInterval(id); resolve(); } }, 1, 2); });
      clearTimeout(12345);
      clearInterval(undefined);
      return [seen, n]`);
    expect(result).toEqual([['xy'], 6]);
  });

  it('refuses a callback that is not a function', async () => {
    expect(await error("setTimeout('code string', 1)")).toBe('TypeError: The callback must be a function');
    expect(await error('queueMicrotask(1)')).toBe('TypeError: The callback must be a function');
  });

  it('numbers timers from 1 again in every task of a warm context', async () => {
    const code = 'const id = setTimeout(() => {}, 1); clearTimeout(id); return id';
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await value(code, { owner: 'w' }));
    expect(ids).toEqual([1, 1, 1]);
  });
});
