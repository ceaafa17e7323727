// The sandbox's Web globals: one script evaluated inside every new vm context, joined here from the pieces
// in runner/sandbox/prelude/, one per hardening concern (intrinsics captured before user code can replace
// them; the outcome and console; timers; DOMException and structuredClone; text encoding; URL; fetch; Web
// Crypto; stack traces; installing the globals; the per-task scope). The realm cannot import: each piece is
// a function whose source text (Function.prototype.toString of type-stripped TypeScript is plain
// JavaScript) goes into the script, so it references nothing outside itself but types and what it is
// handed; `sandboxPrelude` calls them in the order their sections had when the prelude was one function.
//
// For each task run in the context, `begin` defines the read-only scope variables and the one-shot entry
// the compiled user script calls, and `end` puts the global object back as it was before the first task.
// Whatever needs the host goes through `Bridge` (host functions in runner/sandbox/bridge.ts) and carries
// primitives only: no host object ever reaches user code.
import { defineConsole } from './prelude/console.ts';
import type { Bridge, PreludeOptions, SandboxControls } from './prelude/contract.ts';
import { defineWebCrypto } from './prelude/crypto.ts';
import { defineEncoding } from './prelude/encoding.ts';
import { defineFetchClasses } from './prelude/fetch.ts';
import { installGlobals } from './prelude/globals.ts';
import { captureIntrinsics } from './prelude/intrinsics.ts';
import { lockStackTraces } from './prelude/stack-traces.ts';
import { defineStructuredClone } from './prelude/structured-clone.ts';
import { defineTaskScope } from './prelude/task-scope.ts';
import { defineTimers } from './prelude/timers.ts';
import { defineUrlClasses } from './prelude/url.ts';

/** The pieces, by name: the script hands them to `sandboxPrelude` as these properties. */
const PIECES = {
  captureIntrinsics,
  defineConsole,
  defineTimers,
  defineStructuredClone,
  defineEncoding,
  defineUrlClasses,
  defineFetchClasses,
  defineWebCrypto,
  lockStackTraces,
  installGlobals,
  defineTaskScope,
};

type PreludePieces = typeof PIECES;

/** What the prelude script evaluates to, in the context: installs the globals, returns the controls. */
export type PreludeInstaller = (host: Bridge, options: PreludeOptions) => SandboxControls;

/**
 * Runs in the context (its source text is part of the script): the pieces in order. Only lockStackTraces
 * and installGlobals change the global object, and defineTaskScope then records it as the baseline `end`
 * restores, as the single function did at its end.
 */
function sandboxPrelude(host: Bridge, options: PreludeOptions, pieces: PreludePieces): SandboxControls {
  const { entryName, filename, subtleMethods } = options;
  const k = pieces.captureIntrinsics(host);
  const outcome = pieces.defineConsole(k);
  const timers = pieces.defineTimers(k, outcome.fail);
  const clone = pieces.defineStructuredClone(k);
  const encoding = pieces.defineEncoding(k, clone.domError);
  const urls = pieces.defineUrlClasses(k, encoding);
  const fetches = pieces.defineFetchClasses(k, encoding, urls);
  const webCrypto = pieces.defineWebCrypto(k, encoding, clone.domError, subtleMethods);
  pieces.lockStackTraces(k, outcome.errorText, filename);
  pieces.installGlobals(k, {
    domException: clone.domException,
    text: encoding.text,
    url: urls.url,
    web: fetches.web,
    webCrypto: webCrypto.webCrypto,
    atob: encoding.atob,
    btoa: encoding.btoa,
    structuredClone: clone.structuredClone,
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
    setInterval: timers.setInterval,
    clearInterval: timers.clearInterval,
    queueMicrotask: timers.queueMicrotask,
    console: outcome.console,
  });
  return pieces.defineTaskScope(k, {
    entryName,
    succeed: outcome.succeed,
    fail: outcome.fail,
    resetTimers: timers.resetTimers,
    openConsole: outcome.openConsole,
  });
}

/**
 * The script's source: evaluated in a context, it yields the `PreludeInstaller`. The pieces are inlined as
 * function expressions, so that the realm gets its own copies of them.
 */
export function preludeSource(): string {
  const pieces = Object.entries(PIECES).map(([name, piece]) => `${name}: ${piece.toString()}`);
  return `'use strict';((pieces) => (host, options) => (${sandboxPrelude.toString()})(host, options, pieces))({\n${pieces.join(',\n')}\n})`;
}
