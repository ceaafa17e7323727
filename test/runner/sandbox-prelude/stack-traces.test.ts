// runner/sandbox/prelude/stack-traces.ts: a stack trace lists only the user's own frames, and its
// formatter cannot be replaced.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: stack traces', () => {
  it('lists only frames of the function, with its own line numbers', async () => {
    const stack = (await value(`function inner() { return new Error('here').stack }
      return [1].map(() => inner())[0]`)) as string;
    expect(stack.split('\n')[0]).toBe('Error: here');
    const frames = stack.split('\n').slice(1);
    expect(frames.length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame).toMatch(/function\.js:\d+/);
    expect(stack).not.toMatch(/node:|runner\/|sandbox-prelude/);
  });

  it('keeps Error.prepareStackTrace and the Error binding locked', async () => {
    const result = await value(`'use strict';
      const refused = [];
      try { Error.prepareStackTrace = () => 'mine' } catch (e) { refused.push(e.name) }
      try { globalThis.Error = function () {} } catch (e) { refused.push(e.name) }
      return [refused, new Error('x').stack.startsWith('Error: x')]`);
    expect(result).toEqual([['TypeError', 'TypeError'], true]);
  });
});
