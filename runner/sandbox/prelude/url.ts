// URL and URLSearchParams: parsing and setting URL parts is the host's (bridge `url`, `urlSet`: the
// WHATWG parser), the parts come back as JSON text; query strings are handled here.
//
// A piece of the sandbox prelude (runner/sandbox/prelude.ts joins the pieces into the one script evaluated
// inside every new vm context): its source text runs in the sandbox's realm, so it references nothing
// outside itself but types and what it is handed (intrinsics captured before any user code ran).

import type { Encoding } from './encoding.ts';
import type { Intrinsics } from './intrinsics.ts';

export function defineUrlClasses(k: Intrinsics, encoding: Encoding) {
  const { apply, jsonParse, CtxTypeError, CtxUint8Array, hostUrl, hostUrlSet } = k;
  const { bytesToLatin1, utf8Encode, utf8Decode } = encoding;

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

  // Created on first use: defining a class costs a few microseconds in every new context.
  let urlClasses: ReturnType<typeof defineUrl> | undefined;
  const url = () => (urlClasses ??= defineUrl());
  /** The classes if created: until then, no URLSearchParams can exist. */
  const createdUrl = () => urlClasses;
  return { absoluteHref, url, createdUrl };
}

export type UrlClasses = ReturnType<typeof defineUrlClasses>;
