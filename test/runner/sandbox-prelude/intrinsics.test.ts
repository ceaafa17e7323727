// runner/sandbox/prelude/intrinsics.ts: the sandbox's own machinery uses the built-ins captured before user
// code ran, so replacing the live ones changes nothing for it.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { run, value } = sandbox();

describe('prelude: intrinsics', () => {
  it('settles, logs and arms timers with the captured built-ins after user code replaced the live ones', async () => {
    const outcome = await run(`JSON.stringify = () => '"forged"';
      JSON.parse = () => 'forged';
      Reflect.apply = () => { throw new Error('forged apply') };
      Promise.prototype.then = function () { throw new Error('forged then') };
      Map = function () { throw new Error('forged Map') };
      console.log({ a: 1 });
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { kept: [1, 'two'] }`);
    expect(outcome).toMatchObject({ ok: true, value: { kept: [1, 'two'] }, logs: ['{"a":1}'] });
  });

  it('raises its errors with the captured constructors, and reads bytes with the captured checks', async () => {
    const result = await value(`const OriginalTypeError = TypeError;
      globalThis.TypeError = function Forged() {};
      ArrayBuffer.isView = () => false;
      let raised;
      try { setTimeout('not a function') } catch (e) { raised = e }
      return [raised instanceof OriginalTypeError, raised.message, new TextDecoder().decode(new Uint8Array([104, 105]))]`);
    expect(result).toEqual([true, 'The callback must be a function', 'hi']);
  });
});
