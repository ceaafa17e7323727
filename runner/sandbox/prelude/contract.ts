// What the sandbox prelude (runner/sandbox/prelude.ts and its pieces) and the host (runner/sandbox/bridge.ts,
// contexts.ts, crypto-encoding.ts) agree on: the bridge's host functions, the options the prelude is given,
// the controls it hands back, and the crypto.subtle methods offered. Apart from SUBTLE_METHODS (which the
// prelude receives as data, never by import), types only.

/** Host functions: primitives in and out, never throwing; results come back through resolving functions. */
export interface Bridge {
  log(level: string, text: string): boolean;
  settle(ok: boolean, text: string): void;
  setTimer(ms: number, fire: () => void): number;
  clearTimer(id: number): void;
  fetch(request: string, resolve: (response: string) => void, reject: (message: string) => void): void;
  subtle(
    method: string,
    args: string,
    resolve: (result: string) => void,
    reject: (error: string) => void,
  ): void;
  url(input: string, base: string | undefined): string;
  urlSet(href: string, part: string, value: string): string;
  randomBytes(length: number): string;
  randomUUID(): string;
}

/**
 * The `crypto.subtle` methods the sandbox offers: the prelude defines them (from `PreludeOptions`), and
 * the host (runner/sandbox/worker.ts) performs only these.
 */
export const SUBTLE_METHODS: readonly string[] = Object.freeze([
  'encrypt',
  'decrypt',
  'sign',
  'verify',
  'digest',
  'generateKey',
  'deriveKey',
  'deriveBits',
  'importKey',
  'exportKey',
  'wrapKey',
  'unwrapKey',
]);

export interface PreludeOptions {
  /** The global the compiled user script calls with the user's function. */
  entryName: string;
  /** The user script's file name: stack traces keep only its frames. */
  filename: string;
  /** SUBTLE_METHODS, given as data: the prelude cannot import it. Read by index, strings only. */
  subtleMethods: readonly string[];
}

/**
 * The host's handles on a prepared context. Both run only intrinsics captured before any user code ran
 * (user code may have replaced the live ones in an earlier task), and answer false, rather than throw,
 * when the context cannot serve another task.
 */
export interface SandboxControls {
  /** Readies the context for a task: its scope variables (JSON text) and a fresh entry, timers, console. */
  begin(scope: string): boolean;
  /** Puts the global object back as the prelude left it: drops added globals, restores replaced ones. */
  end(): boolean;
}
