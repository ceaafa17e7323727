// runner/sandbox/prelude/structured-clone.ts: structuredClone copies within the sandbox's realm, and
// DOMException is the error class the Web globals raise.
import { describe, expect, it } from 'vitest';
import { sandbox } from './sandbox.ts';

const { value } = sandbox();

describe('prelude: DOMException and structuredClone', () => {
  it('clones errors, regular expressions, array buffers and typed array views', async () => {
    const result = await value(`const buffer = new Uint8Array([1, 2, 3, 4]).buffer;
      const source = { error: new TypeError('bad'), pattern: /a+/gi, buffer, view: new DataView(buffer, 1, 2), list: [1, [2]] };
      const copy = structuredClone(source);
      return [copy.error instanceof Error, copy.error.name, copy.error.message, copy.pattern.source, copy.pattern.flags,
        copy.buffer !== buffer, copy.buffer.byteLength, copy.view.byteOffset, copy.view.buffer === copy.buffer, copy.list]`);
    expect(result).toEqual([true, 'TypeError', 'bad', 'a+', 'gi', true, 4, 1, true, [1, [2]]]);
  });

  it('raises DOMExceptions that are Errors with a name of their own', async () => {
    const result = await value(`let refused;
      try { structuredClone({ s: Symbol('x') }) } catch (e) { refused = e }
      const made = new DOMException('message', 'AbortError');
      return [refused instanceof DOMException, refused instanceof Error, refused.name, made.name, made.message, String(made)]`);
    expect(result).toEqual([true, true, 'DataCloneError', 'AbortError', 'message', 'AbortError: message']);
  });
});
