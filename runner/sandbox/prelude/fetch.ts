// fetch, Headers, Request and Response: a request is checked and normalized here, then crosses the bridge
// as JSON text (bridge `fetch`, performed by runner/sandbox/host-fetch.ts); the answer comes back whole
// (its body as latin1) and becomes a Response of this realm.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).

import type { Encoding } from './encoding.ts';
import type { Intrinsics } from './intrinsics.ts';
import type { UrlClasses } from './url.ts';

export function defineFetchClasses(k: Intrinsics, encoding: Encoding, urls: UrlClasses) {
  const {
    apply,
    jsonStringify,
    jsonParse,
    isView,
    CtxPromise,
    CtxTypeError,
    CtxRangeError,
    CtxMap,
    CtxUint8Array,
    CtxArrayBuffer,
    hostFetch,
    then,
  } = k;
  const { bytesOf, latin1ToBytes, bytesToLatin1, utf8Encode, utf8Decode } = encoding;
  const { absoluteHref, createdUrl } = urls;

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
      const urlClasses = createdUrl();
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

  // Created on first use: defining a class costs a few microseconds in every new context.
  let fetchClasses: ReturnType<typeof defineFetch> | undefined;
  const web = () => (fetchClasses ??= defineFetch());
  return { web };
}
