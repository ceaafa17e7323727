// DOMException (and `domError`, through which the other pieces raise one) and structuredClone, which copies
// within this realm and refuses what the spec refuses (functions, symbols) with a DataCloneError.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

export function defineStructuredClone(k: Intrinsics) {
  const { defineProperty, isArray, isView, CtxError, CtxMap, CtxArrayBuffer } = k;

  function defineDOMException() {
    class DOMException extends CtxError {
      #name: string;
      constructor(message: unknown = '', name: unknown = 'Error') {
        super(String(message));
        this.#name = String(name);
      }
      override get name() {
        return this.#name;
      }
    }
    return DOMException;
  }

  function structuredClone<T>(value: T): T {
    return cloneValue(value, new CtxMap()) as T;
  }

  function cloneValue(value: unknown, memo: Map<object, unknown>): unknown {
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw domError(`${String(value)} could not be cloned.`, 'DataCloneError');
    }
    if (typeof value !== 'object' || value === null) return value;
    const known = memo.get(value);
    if (known !== undefined) return known;
    if (value instanceof Date) return remember(memo, value, new Date(value.getTime()));
    if (value instanceof RegExp) return remember(memo, value, new RegExp(value.source, value.flags));
    if (value instanceof CtxArrayBuffer) return remember(memo, value, value.slice(0));
    if (isView(value)) return cloneView(value, memo);
    if (value instanceof CtxMap) return cloneMap(value, memo);
    if (value instanceof Set) return cloneSet(value, memo);
    if (value instanceof CtxError) return cloneError(value, memo);
    const copy = remember(memo, value, isArray(value) ? [] : {}) as Record<string, unknown>;
    for (const key of Object.keys(value))
      copy[key] = cloneValue((value as Record<string, unknown>)[key], memo);
    return copy;
  }

  function remember<T>(memo: Map<object, unknown>, original: object, copy: T): T {
    memo.set(original, copy);
    return copy;
  }

  function cloneView(view: ArrayBufferView, memo: Map<object, unknown>): unknown {
    const buffer = cloneValue(view.buffer, memo) as ArrayBuffer;
    const View = view.constructor as new (buffer: ArrayBuffer, offset: number, length: number) => unknown;
    const length = view instanceof DataView ? view.byteLength : (view as Uint8Array).length;
    return remember(memo, view, new View(buffer, view.byteOffset, length));
  }

  function cloneMap(map: Map<unknown, unknown>, memo: Map<object, unknown>): unknown {
    const copy = remember(memo, map, new CtxMap());
    for (const [key, item] of map) copy.set(cloneValue(key, memo), cloneValue(item, memo));
    return copy;
  }

  function cloneSet(set: Set<unknown>, memo: Map<object, unknown>): unknown {
    const copy = remember(memo, set, new Set());
    for (const item of set) copy.add(cloneValue(item, memo));
    return copy;
  }

  function cloneError(error: Error, memo: Map<object, unknown>): unknown {
    const copy = remember(memo, error, new CtxError(error.message));
    defineProperty(copy, 'name', { value: error.name, writable: true, configurable: true });
    if (error.stack !== undefined) copy.stack = error.stack;
    return copy;
  }

  // Created on first use: defining a class costs a few microseconds in every new context.
  let domExceptionClass: ReturnType<typeof defineDOMException> | undefined;
  const domException = () => (domExceptionClass ??= defineDOMException());

  function domError(message: string, name: string): Error {
    return new (domException())(message, name);
  }
  return { domException, domError, structuredClone };
}
