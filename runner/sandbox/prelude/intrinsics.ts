// The intrinsics the other prelude pieces rely on, captured before user code can replace them, and the
// host functions of the bridge, wrapped so that no host-realm exception ever reaches user code.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).
import type { Bridge } from './contract.ts';

export function captureIntrinsics(host: Bridge) {
  const g = globalThis as unknown as Record<string, unknown>;
  const {
    apply,
    defineProperty,
    deleteProperty,
    getOwnPropertyDescriptor,
    getPrototypeOf,
    isExtensible,
    ownKeys,
    setPrototypeOf,
  } = Reflect;
  const objectKeys = Object.keys;
  const CtxSet = Set;
  const setHas = Set.prototype.has;
  const regExpExec = RegExp.prototype.exec;
  const jsonStringify = JSON.stringify;
  const jsonParse = JSON.parse;
  const fromCharCode = String.fromCharCode;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const CtxPromise = Promise;
  const promiseThen = Promise.prototype.then;
  const CtxError = Error;
  const CtxTypeError = TypeError;
  const CtxRangeError = RangeError;
  const CtxMap = Map;
  const CtxWeakSet = WeakSet;
  const CtxUint8Array = Uint8Array;
  const CtxArrayBuffer = ArrayBuffer;

  // Host functions, wrapped so that no host-realm exception (a stack overflow raised on entry to a host
  // function, say) ever reaches user code: its constructor would be the host's Function.
  function guard<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A): R => {
      try {
        return apply(fn, undefined, args);
      } catch {
        throw new CtxError('Sandbox host call failed');
      }
    };
  }
  const hostLog = guard(host.log);
  const hostSettle = guard(host.settle);
  const hostSetTimer = guard(host.setTimer);
  const hostClearTimer = guard(host.clearTimer);
  const hostFetch = guard(host.fetch);
  const hostSubtle = guard(host.subtle);
  const hostUrl = guard(host.url);
  const hostUrlSet = guard(host.urlSet);
  const hostRandomBytes = guard(host.randomBytes);
  const hostRandomUUID = guard(host.randomUUID);

  function then<T, R>(promise: Promise<T>, onFulfilled: (value: T) => R, onRejected?: (error: unknown) => R) {
    return apply(promiseThen, promise, [onFulfilled, onRejected]) as Promise<R>;
  }

  return {
    g,
    apply,
    defineProperty,
    deleteProperty,
    getOwnPropertyDescriptor,
    getPrototypeOf,
    isExtensible,
    ownKeys,
    setPrototypeOf,
    objectKeys,
    CtxSet,
    setHas,
    regExpExec,
    jsonStringify,
    jsonParse,
    fromCharCode,
    isArray,
    isView,
    CtxPromise,
    CtxError,
    CtxTypeError,
    CtxRangeError,
    CtxMap,
    CtxWeakSet,
    CtxUint8Array,
    CtxArrayBuffer,
    hostLog,
    hostSettle,
    hostSetTimer,
    hostClearTimer,
    hostFetch,
    hostSubtle,
    hostUrl,
    hostUrlSet,
    hostRandomBytes,
    hostRandomUUID,
    then,
  };
}

export type Intrinsics = ReturnType<typeof captureIntrinsics>;
