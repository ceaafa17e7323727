// The sandbox's Web globals, written as one function whose source text is evaluated inside every new
// vm context (Function.prototype.toString of type-stripped TypeScript is plain JavaScript). It therefore
// references nothing outside itself but types: it runs in another realm. Data it shares with the host
// (SUBTLE_METHODS) is handed to it in `PreludeOptions`.
//
// It captures the intrinsics it relies on before user code can replace them and defines the Web globals
// (fetch, URL, Web Crypto, timers, console and the rest); then, for each task run in the context, `begin`
// defines the read-only scope variables and the one-shot entry the compiled user script calls, and `end`
// puts the global object back as it was before the first task. Whatever needs the host goes through
// `Bridge` (host functions in runner/sandbox/worker.ts) and carries primitives only: no host object ever
// reaches user code.

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

export function sandboxPrelude(host: Bridge, options: PreludeOptions): SandboxControls {
  const { entryName, filename, subtleMethods } = options;
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

  // Outcome and errors ------------------------------------------------------------------------------------

  function errorText(error: unknown): string {
    if (typeof error === 'string') return error;
    if (error instanceof CtxError) {
      try {
        return error.message ? `${error.name}: ${error.message}` : String(error.name);
      } catch {
        return 'Error';
      }
    }
    return inspect(error);
  }

  function fail(error: unknown): void {
    hostSettle(false, errorText(error));
  }

  function succeed(value: unknown): void {
    if (typeof value === 'function' || typeof value === 'symbol') {
      fail(new CtxTypeError(`Function returned a ${typeof value}, which is not JSON data`));
      return;
    }
    let text: string | undefined;
    try {
      text = jsonStringify(value);
    } catch (error) {
      fail(new CtxTypeError(`Function returned a value that is not JSON data (${errorText(error)})`));
      return;
    }
    // undefined (and a toJSON answering undefined) becomes null.
    hostSettle(true, text === undefined ? 'null' : text);
  }

  // console ----------------------------------------------------------------------------------------------

  function inspect(value: unknown): string {
    switch (typeof value) {
      case 'string':
        return jsonStringify(value);
      case 'bigint':
        return `${value}n`;
      case 'symbol':
        return value.toString();
      case 'function':
        return `[Function: ${value.name || '(anonymous)'}]`;
      case 'object':
        return value === null ? 'null' : inspectObject(value);
      default:
        return String(value);
    }
  }

  function inspectObject(value: object): string {
    if (value instanceof CtxError) return value.stack ?? errorText(value);
    if (value instanceof CtxMap) return `Map(${value.size}) ${inspectObject([...value])}`;
    if (value instanceof Set) return `Set(${value.size}) ${inspectObject([...value])}`;
    const seen = new CtxWeakSet<object>();
    try {
      return jsonStringify(value, (_key, item: unknown) => {
        if (typeof item === 'bigint') return `${item}n`;
        if (typeof item === 'function') return `[Function: ${item.name || '(anonymous)'}]`;
        if (typeof item === 'symbol') return item.toString();
        if (typeof item === 'object' && item !== null) {
          if (seen.has(item)) return '[Circular]';
          seen.add(item);
        }
        return item;
      });
    } catch {
      return String(value);
    }
  }

  let consoleOpen = true;
  function emit(level: string, args: unknown[]): void {
    if (!consoleOpen) return;
    let line = '';
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      line += (i === 0 ? '' : ' ') + (typeof arg === 'string' ? arg : inspect(arg));
    }
    consoleOpen = hostLog(level, line);
  }
  const console = {
    log: (...args: unknown[]) => emit('log', args),
    info: (...args: unknown[]) => emit('info', args),
    warn: (...args: unknown[]) => emit('warn', args),
    error: (...args: unknown[]) => emit('error', args),
    debug: (...args: unknown[]) => emit('debug', args),
  };

  // Timers ------------------------------------------------------------------------------------------------

  // Sandbox timer id → host timer id; an entry exists while the timer is armed.
  let timers = new CtxMap<number, number>();
  let nextTimerId = 1;

  function arm(id: number, callback: () => void, delay: number, repeat: boolean): void {
    let fire!: () => void;
    const fired = new CtxPromise<void>((resolve) => {
      fire = resolve;
    });
    const hostId = hostSetTimer(delay, fire);
    timers.set(id, hostId);
    then(fired, () => {
      if (timers.get(id) !== hostId) return;
      if (repeat) arm(id, callback, delay, true);
      else timers.delete(id);
      try {
        callback();
      } catch (error) {
        fail(error);
      }
    });
  }

  function startTimer(callback: unknown, ms: unknown, args: unknown[], repeat: boolean): number {
    if (typeof callback !== 'function') throw new CtxTypeError('The callback must be a function');
    const delay = Math.max(Number(ms) || 0, 0);
    const id = nextTimerId++;
    arm(id, () => apply(callback, undefined, args), delay, repeat);
    return id;
  }

  function stopTimer(id: unknown): void {
    const hostId = timers.get(id as number);
    if (hostId === undefined) return;
    timers.delete(id as number);
    hostClearTimer(hostId);
  }

  const setTimeout = (callback: unknown, ms?: unknown, ...args: unknown[]) =>
    startTimer(callback, ms, args, false);
  const setInterval = (callback: unknown, ms?: unknown, ...args: unknown[]) =>
    startTimer(callback, ms, args, true);
  const clearTimeout = (id?: unknown) => stopTimer(id);
  const clearInterval = (id?: unknown) => stopTimer(id);
  const queueMicrotask = (callback: unknown) => {
    if (typeof callback !== 'function') throw new CtxTypeError('The callback must be a function');
    then(CtxPromise.resolve(), () => {
      try {
        callback();
      } catch (error) {
        fail(error);
      }
    });
  };

  // Bytes, text, base64 -----------------------------------------------------------------------------------

  function bytesOf(source: unknown): Uint8Array {
    if (source instanceof CtxArrayBuffer) return new CtxUint8Array(source);
    if (isView(source)) return new CtxUint8Array(source.buffer, source.byteOffset, source.byteLength);
    throw new CtxTypeError('Expected an ArrayBuffer or an ArrayBuffer view');
  }

  function latin1ToBytes(text: string): Uint8Array {
    const bytes = new CtxUint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return bytes;
  }

  function bytesToLatin1(bytes: Uint8Array): string {
    let text = '';
    for (let i = 0; i < bytes.length; i += 8192) {
      text += apply(fromCharCode, undefined, bytes.subarray(i, i + 8192) as unknown as number[]);
    }
    return text;
  }

  function utf8Encode(text: string): Uint8Array {
    const out = new CtxUint8Array(text.length * 3);
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
          i++;
        }
      }
      if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
      n = writeUtf8(out, n, code);
    }
    return out.slice(0, n);
  }

  function writeUtf8(out: Uint8Array, n: number, code: number): number {
    if (code < 0x80) {
      out[n] = code;
      return n + 1;
    }
    if (code < 0x800) {
      out[n] = 0xc0 | (code >> 6);
      out[n + 1] = 0x80 | (code & 0x3f);
      return n + 2;
    }
    if (code < 0x10000) {
      out[n] = 0xe0 | (code >> 12);
      out[n + 1] = 0x80 | ((code >> 6) & 0x3f);
      out[n + 2] = 0x80 | (code & 0x3f);
      return n + 3;
    }
    out[n] = 0xf0 | (code >> 18);
    out[n + 1] = 0x80 | ((code >> 12) & 0x3f);
    out[n + 2] = 0x80 | ((code >> 6) & 0x3f);
    out[n + 3] = 0x80 | (code & 0x3f);
    return n + 4;
  }

  // WHATWG UTF-8 decode: each maximal invalid subpart becomes one U+FFFD (or an error when fatal).
  function utf8Decode(bytes: Uint8Array, fatal: boolean): string {
    const units: number[] = [];
    let text = '';
    let i = 0;
    const invalid = () => {
      if (fatal) throw new CtxTypeError('The encoded data was not valid for encoding utf-8');
      units.push(0xfffd);
    };
    while (i < bytes.length) {
      if (units.length >= 8192) {
        text += apply(fromCharCode, undefined, units.splice(0));
      }
      const lead = bytes[i] as number;
      if (lead < 0x80) {
        units.push(lead);
        i++;
        continue;
      }
      let need = 0;
      let code = 0;
      let lower = 0x80;
      let upper = 0xbf;
      if (lead >= 0xc2 && lead <= 0xdf) {
        need = 1;
        code = lead & 0x1f;
      } else if (lead >= 0xe0 && lead <= 0xef) {
        need = 2;
        code = lead & 0xf;
        if (lead === 0xe0) lower = 0xa0;
        if (lead === 0xed) upper = 0x9f;
      } else if (lead >= 0xf0 && lead <= 0xf4) {
        need = 3;
        code = lead & 0x7;
        if (lead === 0xf0) lower = 0x90;
        if (lead === 0xf4) upper = 0x8f;
      } else {
        invalid();
        i++;
        continue;
      }
      let j = 1;
      for (; j <= need; j++) {
        const next = bytes[i + j];
        if (next === undefined || next < lower || next > upper) break;
        lower = 0x80;
        upper = 0xbf;
        code = (code << 6) | (next & 0x3f);
      }
      if (j <= need) {
        invalid();
        i += j;
        continue;
      }
      i += need + 1;
      if (code > 0xffff) {
        code -= 0x10000;
        units.push(0xd800 + (code >> 10), 0xdc00 + (code & 0x3ff));
      } else {
        units.push(code);
      }
    }
    return text + apply(fromCharCode, undefined, units);
  }

  function defineText() {
    class TextEncoder {
      get encoding() {
        return 'utf-8';
      }
      encode(input: unknown = ''): Uint8Array {
        return utf8Encode(String(input));
      }
      encodeInto(source: unknown, destination: Uint8Array): { read: number; written: number } {
        const text = String(source);
        const scratch = new CtxUint8Array(4);
        let read = 0;
        let written = 0;
        while (read < text.length) {
          const code = text.codePointAt(read) as number;
          const units = code > 0xffff ? 2 : 1;
          const size = writeUtf8(scratch, 0, code >= 0xd800 && code <= 0xdfff ? 0xfffd : code);
          if (written + size > destination.length) break;
          destination.set(scratch.subarray(0, size), written);
          written += size;
          read += units;
        }
        return { read, written };
      }
    }

    class TextDecoder {
      #fatal: boolean;
      #ignoreBOM: boolean;
      constructor(label: unknown = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
        const name = String(label).trim().toLowerCase();
        if (name !== 'utf-8' && name !== 'utf8' && name !== 'unicode-1-1-utf-8') {
          throw new CtxRangeError(`The "${name}" encoding is not supported`);
        }
        this.#fatal = Boolean(options?.fatal);
        this.#ignoreBOM = Boolean(options?.ignoreBOM);
      }
      get encoding() {
        return 'utf-8';
      }
      get fatal() {
        return this.#fatal;
      }
      get ignoreBOM() {
        return this.#ignoreBOM;
      }
      decode(input?: unknown): string {
        if (input === undefined) return '';
        const text = utf8Decode(bytesOf(input), this.#fatal);
        return !this.#ignoreBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      }
    }
    return { TextEncoder, TextDecoder };
  }

  const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

  function btoa(data: unknown): string {
    const text = String(data);
    let out = '';
    for (let i = 0; i < text.length; i += 3) {
      const a = text.charCodeAt(i);
      const b = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
      const c = i + 2 < text.length ? text.charCodeAt(i + 2) : -1;
      if (a > 0xff || b > 0xff || c > 0xff) {
        throw domError('Invalid character', 'InvalidCharacterError');
      }
      out += BASE64[a >> 2];
      out += BASE64[((a & 3) << 4) | (b < 0 ? 0 : b >> 4)];
      out += b < 0 ? '=' : BASE64[((b & 15) << 2) | (c < 0 ? 0 : c >> 6)];
      out += c < 0 ? '=' : BASE64[c & 63];
    }
    return out;
  }

  function atob(data: unknown): string {
    let text = String(data).replace(/[\t\n\f\r ]/g, '');
    if (text.length % 4 === 0) text = text.replace(/==?$/, '');
    if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
      throw domError('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    }
    let out = '';
    let buffer = 0;
    let bits = 0;
    for (let i = 0; i < text.length; i++) {
      buffer = (buffer << 6) | BASE64.indexOf(text[i] as string);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((buffer >> bits) & 0xff);
      }
    }
    return out;
  }

  // DOMException, structuredClone ------------------------------------------------------------------------

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

  // Headers, Request, Response ------------------------------------------------------------------------

  function defineFetch() {
    const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

    function headerName(name: unknown): string {
      const text = String(name);
      if (!TOKEN.test(text)) throw new CtxTypeError(`Invalid header name: "${text}"`);
      return text.toLowerCase();
    }

    function headerValue(value: unknown): string {
      const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
      if (/[\0\r\n]/.test(text)) throw new CtxTypeError(`Invalid header value: "${text}"`);
      return text;
    }

    class Headers {
      #map = new CtxMap<string, string[]>();
      constructor(init?: unknown) {
        if (init === undefined || init === null) return;
        if (init instanceof Headers) {
          for (const [name, value] of init.#pairs()) this.append(name, value);
        } else if (typeof init === 'object' && Symbol.iterator in init) {
          for (const pair of init as Iterable<unknown>) {
            const [name, value, ...rest] = pair as unknown[];
            if (rest.length > 0 || value === undefined)
              throw new CtxTypeError('Header pairs must have two items');
            this.append(name, value);
          }
        } else if (typeof init === 'object') {
          for (const name of Object.keys(init)) this.append(name, (init as Record<string, unknown>)[name]);
        } else {
          throw new CtxTypeError('Headers init must be an object or an iterable of pairs');
        }
      }
      #pairs(): [string, string][] {
        const pairs: [string, string][] = [];
        for (const name of [...this.#map.keys()].sort()) {
          const values = this.#map.get(name) as string[];
          if (name === 'set-cookie') for (const value of values) pairs.push([name, value]);
          else pairs.push([name, values.join(', ')]);
        }
        return pairs;
      }
      append(name: unknown, value: unknown): void {
        const key = headerName(name);
        const list = this.#map.get(key);
        if (list) list.push(headerValue(value));
        else this.#map.set(key, [headerValue(value)]);
      }
      set(name: unknown, value: unknown): void {
        this.#map.set(headerName(name), [headerValue(value)]);
      }
      get(name: unknown): string | null {
        return this.#map.get(headerName(name))?.join(', ') ?? null;
      }
      getSetCookie(): string[] {
        return [...(this.#map.get('set-cookie') ?? [])];
      }
      has(name: unknown): boolean {
        return this.#map.has(headerName(name));
      }
      delete(name: unknown): void {
        this.#map.delete(headerName(name));
      }
      forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
        for (const [name, value] of this.#pairs()) apply(callback, thisArg, [value, name, this]);
      }
      *entries(): IterableIterator<[string, string]> {
        yield* this.#pairs();
      }
      *keys(): IterableIterator<string> {
        for (const [name] of this.#pairs()) yield name;
      }
      *values(): IterableIterator<string> {
        for (const [, value] of this.#pairs()) yield value;
      }
      [Symbol.iterator](): IterableIterator<[string, string]> {
        return this.entries();
      }
    }

    /** A body's bytes and the content type it implies. */
    function extractBody(body: unknown): { bytes: Uint8Array; type: string | null } {
      if (typeof body === 'string') return { bytes: utf8Encode(body), type: 'text/plain;charset=UTF-8' };
      // Without the URL classes created, no URLSearchParams can exist.
      if (urlClasses && body instanceof urlClasses.URLSearchParams) {
        return {
          bytes: utf8Encode(body.toString()),
          type: 'application/x-www-form-urlencoded;charset=UTF-8',
        };
      }
      if (body instanceof CtxArrayBuffer || isView(body)) return { bytes: bytesOf(body).slice(), type: null };
      return { bytes: utf8Encode(String(body)), type: 'text/plain;charset=UTF-8' };
    }

    // Reads a body's bytes without consuming it (for fetch, clone and Request copies).
    let peekBytes!: (body: Body) => Uint8Array | null;

    class Body {
      #bytes: Uint8Array | null;
      #used = false;
      static {
        peekBytes = (body) => body.#bytes;
      }
      constructor(bytes: Uint8Array | null) {
        this.#bytes = bytes;
      }
      get bodyUsed(): boolean {
        return this.#used;
      }
      #consume(): Uint8Array {
        if (this.#used) throw new CtxTypeError('Body is unusable: Body has already been read');
        this.#used = true;
        return this.#bytes ?? new CtxUint8Array(0);
      }
      async arrayBuffer(): Promise<ArrayBuffer> {
        return this.#consume().slice().buffer;
      }
      async bytes(): Promise<Uint8Array> {
        return this.#consume().slice();
      }
      async text(): Promise<string> {
        const text = utf8Decode(this.#consume(), false);
        return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      }
      async json(): Promise<unknown> {
        return jsonParse(await this.text());
      }
    }

    class Request extends Body {
      #url: string;
      #method: string;
      #headers: Headers;
      #redirect: string;
      constructor(input: unknown, init: RequestInit = {}) {
        const from = input instanceof Request ? input : null;
        const method = init.method === undefined ? (from?.method ?? 'GET') : normalizeMethod(init.method);
        const body = init.body === undefined || init.body === null ? null : extractBody(init.body);
        if (body && (method === 'GET' || method === 'HEAD')) {
          throw new CtxTypeError('Request with GET/HEAD method cannot have body.');
        }
        super(body ? body.bytes : from ? peekBytes(from) : null);
        this.#url = from ? from.url : absoluteHref(input);
        this.#method = method;
        this.#headers = new Headers(init.headers ?? from?.headers);
        if (body?.type && !this.#headers.has('content-type')) this.#headers.set('content-type', body.type);
        this.#redirect = String(init.redirect ?? from?.redirect ?? 'follow');
      }
      get url(): string {
        return this.#url;
      }
      get method(): string {
        return this.#method;
      }
      get headers(): Headers {
        return this.#headers;
      }
      get redirect(): string {
        return this.#redirect;
      }
      clone(): Request {
        return new Request(this);
      }
    }

    function normalizeMethod(method: unknown): string {
      const text = String(method);
      const upper = text.toUpperCase();
      return ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'].includes(upper) ? upper : text;
    }

    const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
    let setResponseOrigin!: (response: Response, url: string, redirected: boolean) => void;

    class Response extends Body {
      #status: number;
      #statusText: string;
      #headers: Headers;
      #url = '';
      #redirected = false;
      #type = 'default';
      static {
        setResponseOrigin = (response, url, redirected) => {
          response.#url = url;
          response.#redirected = redirected;
          response.#type = 'basic';
        };
      }
      constructor(body: unknown = null, init: ResponseInit = {}) {
        const status = init.status === undefined ? 200 : Number(init.status);
        if (!(status >= 200 && status <= 599) && !NULL_BODY_STATUSES.includes(status)) {
          throw new CtxRangeError(`Invalid response status code ${status}`);
        }
        const extracted = body === null || body === undefined ? null : extractBody(body);
        if (extracted && NULL_BODY_STATUSES.includes(status)) {
          throw new CtxTypeError('Response with null body status cannot have body');
        }
        super(extracted ? extracted.bytes : null);
        this.#status = status;
        this.#statusText = init.statusText === undefined ? '' : String(init.statusText);
        this.#headers = new Headers(init.headers);
        if (extracted?.type && !this.#headers.has('content-type'))
          this.#headers.set('content-type', extracted.type);
      }
      static json(data: unknown, init: ResponseInit = {}): Response {
        const text = jsonStringify(data);
        if (text === undefined) throw new CtxTypeError('Value is not JSON serializable');
        const headers = new Headers(init.headers);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
        return new Response(text, { ...init, headers: headers as unknown as HeadersInit });
      }
      static redirect(url: unknown, status = 302): Response {
        return new Response(null, { status, headers: { location: absoluteHref(url) } });
      }
      get status(): number {
        return this.#status;
      }
      get ok(): boolean {
        return this.#status >= 200 && this.#status <= 299;
      }
      get statusText(): string {
        return this.#statusText;
      }
      get headers(): Headers {
        return this.#headers;
      }
      get url(): string {
        return this.#url;
      }
      get redirected(): boolean {
        return this.#redirected;
      }
      get type(): string {
        return this.#type;
      }
      clone(): Response {
        if (this.bodyUsed) throw new CtxTypeError('Response.clone: Body has already been consumed.');
        const bytes = peekBytes(this);
        const copy = new Response(bytes ? bytes.slice() : null);
        copy.#status = this.#status;
        copy.#statusText = this.#statusText;
        copy.#headers = new Headers(this.#headers);
        copy.#url = this.#url;
        copy.#redirected = this.#redirected;
        copy.#type = this.#type;
        return copy;
      }
    }

    interface HostResponse {
      status: number;
      statusText: string;
      url: string;
      redirected: boolean;
      headers: [string, string][];
      body: string;
    }

    function fetch(input: unknown, init?: RequestInit): Promise<Response> {
      let request: Request;
      try {
        request = new Request(input, init);
      } catch (error) {
        return CtxPromise.reject(error);
      }
      const bytes = peekBytes(request);
      const payload = jsonStringify({
        url: request.url,
        method: request.method,
        headers: [...request.headers],
        body: bytes ? bytesToLatin1(bytes) : null,
        redirect: request.redirect,
      });
      const pending = new CtxPromise<string>((resolve, reject) => hostFetch(payload, resolve, reject));
      return then(pending, toResponse, (message: unknown) => {
        throw new CtxTypeError(typeof message === 'string' ? message : 'fetch failed');
      });
    }

    function toResponse(text: string): Response {
      const data = jsonParse(text) as HostResponse;
      const empty = NULL_BODY_STATUSES.includes(data.status);
      const response = new Response(empty ? null : latin1ToBytes(data.body), {
        status: data.status,
        statusText: data.statusText,
        headers: data.headers,
      });
      setResponseOrigin(response, data.url, data.redirected);
      return response;
    }
    return { Headers, Request, Response, fetch };
  }

  // URL, URLSearchParams ------------------------------------------------------------------------------

  interface UrlParts {
    href: string;
    origin: string;
    protocol: string;
    username: string;
    password: string;
    host: string;
    hostname: string;
    port: string;
    pathname: string;
    search: string;
    hash: string;
  }

  function formEncode(text: string): string {
    return encodeURIComponent(text.toWellFormed())
      .replace(/%20/g, '+')
      .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }

  function formDecode(text: string): string {
    const plain = text.replace(/\+/g, ' ');
    if (!plain.includes('%')) return plain;
    const bytes = utf8Encode(plain);
    const out = new CtxUint8Array(bytes.length);
    let n = 0;
    for (let i = 0; i < bytes.length; i++) {
      const hex = bytes[i] === 0x25 ? bytesToLatin1(bytes.subarray(i + 1, i + 3)) : '';
      if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
        out[n++] = Number.parseInt(hex, 16);
        i += 2;
      } else {
        out[n++] = bytes[i] as number;
      }
    }
    return utf8Decode(out.subarray(0, n), false);
  }

  function parseQuery(query: string): [string, string][] {
    const pairs: [string, string][] = [];
    for (const part of (query.startsWith('?') ? query.slice(1) : query).split('&')) {
      if (part === '') continue;
      const at = part.indexOf('=');
      const name = at < 0 ? part : part.slice(0, at);
      const value = at < 0 ? '' : part.slice(at + 1);
      pairs.push([formDecode(name), formDecode(value)]);
    }
    return pairs;
  }

  function parseUrlParts(input: unknown, base?: unknown): UrlParts | null {
    const text = hostUrl(String(input), base === undefined ? undefined : String(base));
    return text ? (jsonParse(text) as UrlParts) : null;
  }

  function absoluteHref(input: unknown): string {
    const text = String(input);
    const parts = parseUrlParts(text);
    if (!parts) throw new CtxTypeError(`Invalid URL: ${text}`);
    return parts.href;
  }

  function defineUrl() {
    let linkSearchParams!: (params: URLSearchParams, url: URL) => void;
    let resetSearchParams!: (params: URLSearchParams, search: string) => void;
    let setUrlSearchFromParams!: (url: URL, search: string) => void;

    class URLSearchParams {
      #list: [string, string][] = [];
      #url: URL | null = null;
      static {
        linkSearchParams = (params, url) => {
          params.#url = url;
        };
        resetSearchParams = (params, search) => {
          params.#list = parseQuery(search);
        };
      }
      constructor(init: unknown = '') {
        if (init instanceof URLSearchParams) {
          this.#list = init.#list.map(([name, value]) => [name, value]);
        } else if (typeof init === 'object' && init !== null && Symbol.iterator in init) {
          for (const pair of init as Iterable<unknown>) {
            const items = [...(pair as Iterable<unknown>)];
            if (items.length !== 2) throw new CtxTypeError('Each query pair must have exactly two items');
            this.#list.push([String(items[0]), String(items[1])]);
          }
        } else if (typeof init === 'object' && init !== null) {
          for (const name of Object.keys(init)) {
            this.#list.push([name, String((init as Record<string, unknown>)[name])]);
          }
        } else {
          this.#list = parseQuery(String(init));
        }
      }
      #changed(): void {
        if (this.#url) setUrlSearchFromParams(this.#url, this.toString());
      }
      get size(): number {
        return this.#list.length;
      }
      append(name: unknown, value: unknown): void {
        this.#list.push([String(name), String(value)]);
        this.#changed();
      }
      delete(name: unknown, value?: unknown): void {
        const key = String(name);
        this.#list = this.#list.filter(([n, v]) => n !== key || (value !== undefined && v !== String(value)));
        this.#changed();
      }
      get(name: unknown): string | null {
        const key = String(name);
        return this.#list.find(([n]) => n === key)?.[1] ?? null;
      }
      getAll(name: unknown): string[] {
        const key = String(name);
        return this.#list.filter(([n]) => n === key).map(([, v]) => v);
      }
      has(name: unknown, value?: unknown): boolean {
        const key = String(name);
        return this.#list.some(([n, v]) => n === key && (value === undefined || v === String(value)));
      }
      set(name: unknown, value: unknown): void {
        const key = String(name);
        const at = this.#list.findIndex(([n]) => n === key);
        if (at < 0) this.#list.push([key, String(value)]);
        else {
          this.#list[at] = [key, String(value)];
          this.#list = this.#list.filter(([n], i) => n !== key || i <= at);
        }
        this.#changed();
      }
      sort(): void {
        this.#list.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        this.#changed();
      }
      forEach(
        callback: (value: string, name: string, params: URLSearchParams) => void,
        thisArg?: unknown,
      ): void {
        for (const [name, value] of [...this.#list]) apply(callback, thisArg, [value, name, this]);
      }
      *entries(): IterableIterator<[string, string]> {
        for (const [name, value] of [...this.#list]) yield [name, value];
      }
      *keys(): IterableIterator<string> {
        for (const [name] of [...this.#list]) yield name;
      }
      *values(): IterableIterator<string> {
        for (const [, value] of [...this.#list]) yield value;
      }
      [Symbol.iterator](): IterableIterator<[string, string]> {
        return this.entries();
      }
      toString(): string {
        return this.#list.map(([name, value]) => `${formEncode(name)}=${formEncode(value)}`).join('&');
      }
    }

    class URL {
      #parts: UrlParts;
      #params: URLSearchParams | null = null;
      static {
        setUrlSearchFromParams = (url, search) => {
          url.#update('search', search, false);
        };
      }
      constructor(url: unknown, base?: unknown) {
        const text = String(url);
        const parts = parseUrlParts(text, base);
        if (!parts) throw new CtxTypeError(`Invalid URL: ${text}`);
        this.#parts = parts;
      }
      static canParse(url: unknown, base?: unknown): boolean {
        return parseUrlParts(url, base) !== null;
      }
      static parse(url: unknown, base?: unknown): URL | null {
        try {
          return new URL(url, base);
        } catch {
          return null;
        }
      }
      #update(part: string, value: unknown, resetParams = true): void {
        const text = hostUrlSet(this.#parts.href, part, String(value));
        if (!text) {
          if (part === 'href') throw new CtxTypeError(`Invalid URL: ${String(value)}`);
          return;
        }
        this.#parts = jsonParse(text) as UrlParts;
        if (resetParams && this.#params) resetSearchParams(this.#params, this.#parts.search);
      }
      get searchParams(): URLSearchParams {
        if (!this.#params) {
          this.#params = new URLSearchParams(this.#parts.search);
          linkSearchParams(this.#params, this);
        }
        return this.#params;
      }
      get href() {
        return this.#parts.href;
      }
      set href(value) {
        this.#update('href', value);
      }
      get origin() {
        return this.#parts.origin;
      }
      get protocol() {
        return this.#parts.protocol;
      }
      set protocol(value) {
        this.#update('protocol', value);
      }
      get username() {
        return this.#parts.username;
      }
      set username(value) {
        this.#update('username', value);
      }
      get password() {
        return this.#parts.password;
      }
      set password(value) {
        this.#update('password', value);
      }
      get host() {
        return this.#parts.host;
      }
      set host(value) {
        this.#update('host', value);
      }
      get hostname() {
        return this.#parts.hostname;
      }
      set hostname(value) {
        this.#update('hostname', value);
      }
      get port() {
        return this.#parts.port;
      }
      set port(value) {
        this.#update('port', value);
      }
      get pathname() {
        return this.#parts.pathname;
      }
      set pathname(value) {
        this.#update('pathname', value);
      }
      get search() {
        return this.#parts.search;
      }
      set search(value) {
        this.#update('search', value);
      }
      get hash() {
        return this.#parts.hash;
      }
      set hash(value) {
        this.#update('hash', value);
      }
      toString(): string {
        return this.#parts.href;
      }
      toJSON(): string {
        return this.#parts.href;
      }
    }
    return { URL, URLSearchParams };
  }

  // Web Crypto --------------------------------------------------------------------------------------------

  interface KeyData {
    id: number;
    type: string;
    extractable: boolean;
    algorithm: unknown;
    usages: string[];
  }

  function defineCrypto() {
    let makeCryptoKey!: (data: KeyData) => CryptoKey;
    let cryptoKeyId!: (key: CryptoKey) => number;
    let constructingKey = false;

    class CryptoKey {
      #data: KeyData = { id: 0, type: '', extractable: false, algorithm: {}, usages: [] };
      static {
        makeCryptoKey = (data) => {
          constructingKey = true;
          const key = new CryptoKey();
          constructingKey = false;
          key.#data = data;
          return key;
        };
        cryptoKeyId = (key) => key.#data.id;
      }
      constructor() {
        if (!constructingKey) throw new CtxTypeError('Illegal constructor');
      }
      get type() {
        return this.#data.type;
      }
      get extractable() {
        return this.#data.extractable;
      }
      get algorithm() {
        return this.#data.algorithm;
      }
      get usages() {
        return [...this.#data.usages];
      }
    }

    function encodeCryptoArg(value: unknown): unknown {
      if (value instanceof CryptoKey) return { $k: cryptoKeyId(value) };
      if (value instanceof CtxArrayBuffer || isView(value)) return { $b: bytesToLatin1(bytesOf(value)) };
      if (isArray(value)) return value.map(encodeCryptoArg);
      if (typeof value === 'object' && value !== null) {
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value))
          copy[key] = encodeCryptoArg((value as Record<string, unknown>)[key]);
        return copy;
      }
      return value;
    }

    function decodeCryptoResult(_key: string, value: unknown): unknown {
      if (typeof value !== 'object' || value === null) return value;
      const tagged = value as { $b?: string; $u8?: string; $key?: KeyData };
      if (typeof tagged.$b === 'string') return latin1ToBytes(tagged.$b).buffer;
      if (typeof tagged.$u8 === 'string') return latin1ToBytes(tagged.$u8);
      if (tagged.$key) return makeCryptoKey(tagged.$key);
      return value;
    }

    function callSubtle(method: string, args: unknown[]): Promise<unknown> {
      let payload: string;
      try {
        payload = jsonStringify(args.map(encodeCryptoArg));
      } catch (error) {
        return CtxPromise.reject(error);
      }
      const pending = new CtxPromise<string>((resolve, reject) =>
        hostSubtle(method, payload, resolve, reject),
      );
      return then(
        pending,
        (text) => jsonParse(text, decodeCryptoResult),
        (text: unknown) => {
          const { name, message } = jsonParse(String(text)) as { name: string; message: string };
          throw name === 'TypeError' ? new CtxTypeError(message) : domError(message, name);
        },
      );
    }

    const subtle: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (let i = 0; i < subtleMethods.length; i++) {
      const method = subtleMethods[i] as string;
      subtle[method] = (...args: unknown[]) => callSubtle(method, args);
    }

    function getRandomValues<T extends ArrayBufferView>(array: T): T {
      const integer =
        isView(array) &&
        !(array instanceof DataView) &&
        !(array instanceof Float32Array) &&
        !(array instanceof Float64Array);
      if (!integer) throw domError('The data is not an integer typed array', 'TypeMismatchError');
      if (array.byteLength > 65536) {
        throw domError(`The requested length exceeds 65,536 bytes`, 'QuotaExceededError');
      }
      bytesOf(array).set(latin1ToBytes(hostRandomBytes(array.byteLength)));
      return array;
    }

    const crypto = { getRandomValues, randomUUID: () => hostRandomUUID(), subtle };
    return { CryptoKey, crypto };
  }

  // Stack traces: only the user's own frames; the host frames below them are noise (and host paths).
  function prepareStackTrace(error: unknown, sites: { getFileName(): unknown; getLineNumber(): unknown }[]) {
    let text = errorText(error);
    for (const site of sites) {
      if (site.getFileName() === filename && Number(site.getLineNumber()) >= 1) text += `\n    at ${site}`;
    }
    return text;
  }
  // Locked (with the `Error` binding Node looks it up through), so user code cannot swap in a formatter
  // that receives the raw call sites of those host frames.
  defineProperty(CtxError, 'prepareStackTrace', {
    value: prepareStackTrace,
    writable: false,
    configurable: false,
  });
  defineProperty(g, 'Error', { value: CtxError, writable: false, configurable: false, enumerable: false });

  // Installing the globals --------------------------------------------------------------------------------

  // The classes are created on first use, per group: defining a class costs a few microseconds in every
  // new context, and most functions touch none of them.
  let domExceptionClass: ReturnType<typeof defineDOMException> | undefined;
  let textClasses: ReturnType<typeof defineText> | undefined;
  let urlClasses: ReturnType<typeof defineUrl> | undefined;
  let fetchClasses: ReturnType<typeof defineFetch> | undefined;
  let cryptoClasses: ReturnType<typeof defineCrypto> | undefined;
  const domException = () => (domExceptionClass ??= defineDOMException());
  const text = () => (textClasses ??= defineText());
  const url = () => (urlClasses ??= defineUrl());
  const web = () => (fetchClasses ??= defineFetch());
  const webCrypto = () => (cryptoClasses ??= defineCrypto());

  function domError(message: string, name: string): Error {
    return new (domException())(message, name);
  }

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

  // What `end` restores: the global object as it is now, before any user code ran. A scope variable or a
  // global that user code adds is dropped; a replaced or deleted one is put back (non-configurable ones
  // cannot change). Built-ins changed in place (a prototype's method, say) are not tracked: a context is
  // only ever reused for the same code in the same workspace (see runner/sandbox/worker.ts).
  const globalPrototype = getPrototypeOf(g);
  const baselineKeys = new CtxSet<PropertyKey>(ownKeys(g));
  const restorable: { key: PropertyKey; descriptor: PropertyDescriptor }[] = [];
  for (const key of ownKeys(g)) {
    const descriptor = getOwnPropertyDescriptor(g, key) as PropertyDescriptor;
    if (descriptor.configurable)
      restorable.push({ key, descriptor: { __proto__: null, ...descriptor } as PropertyDescriptor });
  }
  // Names a scope variable may not take: whatever the global object has, own or inherited.
  const reserved = new CtxSet<PropertyKey>();
  for (let o: object | null = g; o !== null; o = getPrototypeOf(o))
    for (const key of ownKeys(o)) reserved.add(key);
  const identifier = /^[A-Za-z_$][\w$]*$/;
  // Descriptors without a prototype: an inherited `get` or `value` (Object.prototype polluted by an
  // earlier task) cannot leak into them.
  const readOnly = (value: unknown): PropertyDescriptor =>
    ({ __proto__: null, value, writable: false, configurable: true, enumerable: true }) as PropertyDescriptor;

  function begin(scopeJson: string): boolean {
    try {
      timers = new CtxMap<number, number>();
      nextTimerId = 1;
      consoleOpen = true;
      // Scope variables: JSON parsed here, so they are objects of this realm; read-only, as the spec says.
      const parsed: unknown = jsonParse(scopeJson);
      const scope = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
      const names = objectKeys(scope);
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        if (apply(regExpExec, identifier, [name]) === null || apply(setHas, reserved, [name])) continue;
        if (!defineProperty(g, name, readOnly(scope[name]))) return false;
      }
      // The compiled user script calls this once with the user's async function.
      let started = false;
      const entry = (userFunction: () => Promise<unknown>) => {
        deleteProperty(g, entryName);
        if (started) return;
        started = true;
        try {
          then(userFunction(), succeed, fail);
        } catch (error) {
          fail(error);
        }
      };
      return defineProperty(g, entryName, {
        __proto__: null,
        value: entry,
        configurable: true,
      } as PropertyDescriptor);
    } catch {
      return false;
    }
  }

  function end(): boolean {
    try {
      const keys = ownKeys(g);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as PropertyKey;
        if (!apply(setHas, baselineKeys, [key]) && !deleteProperty(g, key)) return false;
      }
      for (let i = 0; i < restorable.length; i++) {
        const entry = restorable[i] as (typeof restorable)[number];
        if (!defineProperty(g, entry.key, entry.descriptor)) return false;
      }
      return setPrototypeOf(g, globalPrototype) && isExtensible(g);
    } catch {
      return false;
    }
  }

  return { begin, end };
}
