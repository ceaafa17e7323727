// Installing the Web globals on the global object (the classes as lazy globals, created on first use), and
// removing the built-ins the sandbox must not have.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Intrinsics } from './intrinsics.ts';

/** What the other pieces made: the functions, and the lazy makers of each group of classes. */
export interface WebGlobals {
  domException: () => unknown;
  text: () => { TextEncoder: unknown; TextDecoder: unknown };
  url: () => { URL: unknown; URLSearchParams: unknown };
  web: () => { fetch: unknown; Headers: unknown; Request: unknown; Response: unknown };
  webCrypto: () => { crypto: unknown; CryptoKey: unknown };
  atob: (data: unknown) => string;
  btoa: (data: unknown) => string;
  structuredClone: <T>(value: T) => T;
  setTimeout: (callback: unknown, ms?: unknown, ...args: unknown[]) => number;
  clearTimeout: (id?: unknown) => void;
  setInterval: (callback: unknown, ms?: unknown, ...args: unknown[]) => number;
  clearInterval: (id?: unknown) => void;
  queueMicrotask: (callback: unknown) => void;
  console: Record<string, (...args: unknown[]) => void>;
}

export function installGlobals(k: Intrinsics, globals: WebGlobals): void {
  const { g, defineProperty, deleteProperty, ownKeys } = k;
  const { domException, text, url, web, webCrypto } = globals;
  const {
    atob,
    btoa,
    structuredClone,
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    queueMicrotask,
    console,
  } = globals;

  const lazyGlobals: Record<string, () => unknown> = {
    DOMException: domException,
    TextEncoder: () => text().TextEncoder,
    TextDecoder: () => text().TextDecoder,
    URL: () => url().URL,
    URLSearchParams: () => url().URLSearchParams,
    fetch: () => web().fetch,
    Headers: () => web().Headers,
    Request: () => web().Request,
    Response: () => web().Response,
    crypto: () => webCrypto().crypto,
    CryptoKey: () => webCrypto().CryptoKey,
  };
  for (const name of ownKeys(lazyGlobals))
    defineLazyGlobal(name as string, lazyGlobals[name as string] as () => unknown);

  function defineLazyGlobal(name: string, create: () => unknown): void {
    const settle = (value: unknown) => defineProperty(g, name, { value, writable: true, configurable: true });
    defineProperty(g, name, {
      configurable: true,
      get: () => {
        const value = create();
        settle(value);
        return value;
      },
      set: settle,
    });
  }

  const webGlobals: Record<string, unknown> = {
    atob,
    btoa,
    structuredClone,
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    queueMicrotask,
    console,
  };
  for (const name of ownKeys(webGlobals)) {
    defineProperty(g, name, { value: webGlobals[name as string], writable: true, configurable: true });
  }

  // Built-ins removed from the sandbox:
  // - FinalizationRegistry: the engine runs its callbacks from a host task, outside any pump and so outside
  //   any task's time limit; one that loops would hang the worker after the task ended.
  // - SharedArrayBuffer and WebAssembly (whose shared memories are SharedArrayBuffers): shared memory is not
  //   counted in a worker's external memory, so the pool's memory limit could not see it grow. Function
  //   code cannot import modules, so it has little use for either.
  deleteProperty(g, 'FinalizationRegistry');
  deleteProperty(g, 'SharedArrayBuffer');
  deleteProperty(g, 'WebAssembly');
}
