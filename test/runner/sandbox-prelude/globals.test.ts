// runner/sandbox/prelude/globals.ts: the Web globals are installed (the classes created on first use, and
// writable like any global), and the built-ins the sandbox must not have are gone.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: installing the globals', () => {
  it('defines the lazy globals as accessors that become plain values, writable and deletable', async () => {
    const result = await value(`const before = Object.getOwnPropertyDescriptor(globalThis, 'URL');
      const URLClass = URL;
      const after = Object.getOwnPropertyDescriptor(globalThis, 'URL');
      globalThis.fetch = 'replaced';
      const replaced = fetch;
      delete globalThis.Headers;
      return [typeof before.get, after.value === URLClass, after.writable, replaced, typeof globalThis.Headers,
        Object.keys(globalThis).includes('console')]`);
    expect(result).toEqual(['function', true, true, 'replaced', 'undefined', false]);
  });

  it('removes FinalizationRegistry, SharedArrayBuffer and WebAssembly', async () => {
    const result = await value(`return ['FinalizationRegistry', 'SharedArrayBuffer', 'WebAssembly']
      .map((name) => Object.getOwnPropertyNames(globalThis).includes(name))`);
    expect(result).toEqual([false, false, false]);
  });
});
