// Outbound-request guard against SSRF: user-controlled URLs (the http block, the function sandbox's
// fetch, completion callbacks) may only reach public addresses, unless the operator's allow-list
// says otherwise.
// Every hop of a request is vetted on its resolved addresses, and the socket is then connected to
// exactly those vetted addresses (a pinned `lookup`), so a DNS answer that changes between the check
// and the connect (DNS rebinding) cannot redirect the request inside the network.
import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** A request refused by the guard (not a network failure): the destination is not allowed. */
export class RefusedDestinationError extends Error {
  override name = 'RefusedDestinationError';
}

/** No answer from the destination: its name did not resolve, or the connection failed (worth retrying). */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

export interface AllowList {
  /** Lower-case host names, without a trailing dot: allowed whatever they resolve to. */
  hosts: Set<string>;
  ranges: Range[];
}

export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

interface Range {
  bytes: Uint8Array;
  prefix: number;
}

interface NamedRange extends Range {
  name: string;
}

/** Parses allow-list entries: host names ("localhost"), addresses ("127.0.0.1", "[::1]") or CIDRs. */
export function parseAllowList(entries: readonly string[]): AllowList {
  const list: AllowList = { hosts: new Set(), ranges: [] };
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addressPart = '', prefixPart] = entry.split('/');
    const bytes = parseIp(addressPart);
    if (bytes) {
      const max = bytes.length * 8;
      const prefix = prefixPart === undefined ? max : Number(prefixPart);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new Error(`invalid allow-list entry "${raw}": prefix must be 0..${max}`);
      }
      list.ranges.push({ bytes, prefix });
    } else if (prefixPart === undefined && /^[a-z0-9_.-]+$/i.test(entry)) {
      list.hosts.add(normalizeHost(entry));
    } else {
      throw new Error(`invalid allow-list entry "${raw}": expected a host name, an IP address or a CIDR`);
    }
  }
  return list;
}

const V4_BLOCKED: NamedRange[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared/CGNAT'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const V6_BLOCKED: NamedRange[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('fc00::', 7, 'private'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'private'),
  v6('ff00::', 8, 'multicast'),
];

// IPv6 forms that carry an IPv4 address in their last 32 bits and reach it: IPv4-mapped,
// IPv4-compatible (deprecated, still routed by some stacks) and the NAT64 well-known prefix.
const V6_EMBEDDING_V4: Range[] = [
  { bytes: parseIp('::ffff:0:0') as Uint8Array, prefix: 96 },
  { bytes: parseIp('::') as Uint8Array, prefix: 96 },
  { bytes: parseIp('64:ff9b::') as Uint8Array, prefix: 96 },
];

/** Why an address may not be reached ("loopback", "private", …), or null when it is public. */
export function blockedReason(address: string): string | null {
  const bytes = parseIp(address);
  if (!bytes) return 'not an IP address';
  return blockedReasonOf(bytes);
}

function blockedReasonOf(bytes: Uint8Array): string | null {
  if (bytes.length === 16) {
    for (const range of V6_BLOCKED) if (inRange(bytes, range)) return range.name;
    const embedded = embeddedV4(bytes);
    if (embedded) return blockedReasonOf(embedded);
    return null;
  }
  for (const range of V4_BLOCKED) if (inRange(bytes, range)) return range.name;
  return null;
}

function addressAllowed(bytes: Uint8Array, allow: AllowList): boolean {
  const embedded = bytes.length === 16 ? embeddedV4(bytes) : null;
  return allow.ranges.some((r) => inRange(bytes, r) || (embedded !== null && inRange(embedded, r)));
}

/**
 * Resolves a URL's host name and checks every address it resolves to (one bad address refuses the
 * host: the connection could land on any of them). Returns the addresses to connect to.
 */
export async function vetHost(hostname: string, allow: AllowList): Promise<VettedAddress[]> {
  const host = normalizeHost(hostname);
  const literal = parseIp(host);
  if (literal) {
    const reason = blockedReasonOf(literal);
    if (reason && !addressAllowed(literal, allow)) throw refusal(host, host, reason);
    return [{ address: host, family: literal.length === 4 ? 4 : 6 }];
  }
  let resolved: { address: string; family: number }[];
  try {
    resolved = await dnsLookup(host, { all: true, order: 'verbatim' });
  } catch (err) {
    throw new NetworkError(
      `could not resolve host ${host}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  if (resolved.length === 0) throw new Error(`could not resolve host ${host}: no addresses`);
  const hostAllowed = allow.hosts.has(host);
  for (const { address } of resolved) {
    const bytes = parseIp(address);
    if (!bytes) throw new Error(`could not resolve host ${host}: unexpected address ${address}`);
    const reason = blockedReasonOf(bytes);
    if (reason && !hostAllowed && !addressAllowed(bytes, allow)) throw refusal(host, address, reason);
  }
  return resolved.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

function refusal(host: string, address: string, reason: string): RefusedDestinationError {
  const where = host === address ? host : `${host} (resolves to ${address})`;
  return new RefusedDestinationError(
    `refused to connect to ${where}: ${reason} addresses are not allowed (not in the HTTP allow-list)`,
  );
}

/**
 * A `lookup` for node:net that answers with the vetted addresses only, never asking DNS again.
 * Node calls it with `all: true` when it races address families (autoSelectFamily).
 */
export function pinnedLookup(addresses: readonly VettedAddress[]): LookupFunction {
  const lookup = (
    hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: (err: Error | null, address: unknown, family?: number) => void,
  ) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
    const first = usable[0];
    if (!first) {
      const err: NodeJS.ErrnoException = new Error(`no vetted IPv${family} address for ${hostname}`);
      err.code = 'ENOTFOUND';
      callback(err, options.all ? [] : undefined);
    } else if (options.all) {
      callback(
        null,
        usable.map((a) => ({ ...a })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
  return lookup as unknown as LookupFunction;
}

export interface GuardedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  allowList: AllowList;
  signal: AbortSignal;
  /** Redirects followed before giving up; default 5. */
  maxRedirects?: number;
  /** False: a redirect is the answer, its location not requested (completion callbacks). */
  followRedirects?: boolean;
}

export interface GuardedResponse {
  /** The final response, body not yet read: the caller reads (and caps) it. */
  response: http.IncomingMessage;
  /** The URL that answered, after redirects. */
  url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Credentials meant for one origin must not follow a redirect to another (as fetch does).
const ORIGIN_BOUND_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'host'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'transfer-encoding'];

/**
 * Sends a request over node:http(s), vetting the destination of every hop and following redirects
 * manually (each new location vetted again). Errors are thrown with a message fit for a user.
 */
export async function guardedRequest(req: GuardedRequest): Promise<GuardedResponse> {
  const maxRedirects = req.maxRedirects ?? 5;
  let url = req.url;
  let method = req.method.toUpperCase();
  let headers = lowerCaseKeys(req.headers);
  let body = req.body;
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`refused to request ${url.protocol}// URLs: only http and https are supported`);
    }
    const addresses = await vetHost(url.hostname, req.allowList);
    req.signal.throwIfAborted();
    const response = await sendOnce(url, method, headers, body, addresses, req.signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || !location || req.followRedirects === false)
      return { response, url };
    response.destroy();
    if (redirects >= maxRedirects) throw new Error(`too many redirects (more than ${maxRedirects})`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new Error(`redirect to an invalid location: ${location}`);
    }
    const status = response.statusCode;
    if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
      method = 'GET';
      body = undefined;
      headers = withoutKeys(headers, BODY_HEADERS);
    }
    if (next.origin !== url.origin) headers = withoutKeys(headers, ORIGIN_BOUND_HEADERS);
    url = next;
  }
}

function sendOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | string | undefined,
  addresses: VettedAddress[],
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      method,
      headers,
      lookup: pinnedLookup(addresses),
      // A private agent: no pooled socket from other code (connected to who knows where) is reused.
      agent: false,
      signal,
    });
    request.once('response', resolve);
    request.once('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) reject(signal.reason);
      else reject(new NetworkError(`request to ${url.origin} failed: ${describeNetworkError(err)}`));
    });
    request.end(body);
  });
}

export function describeNetworkError(err: NodeJS.ErrnoException): string {
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ETIMEDOUT: 'connection timed out',
    ENOTFOUND: 'host not found',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  return (err.code && known[err.code]) ?? err.message ?? err.code ?? 'unknown error';
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function withoutKeys(headers: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !keys.includes(k)));
}

function normalizeHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** 4 bytes for IPv4, 16 for IPv6 (brackets and zone ids tolerated), null for anything else. */
export function parseIp(text: string): Uint8Array | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const kind = isIP(s);
  if (kind === 4) return Uint8Array.from(s.split('.').map(Number));
  if (kind !== 6) return null;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.', lastColon)) {
    tail = s
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = s.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

function embeddedV4(bytes: Uint8Array): Uint8Array | null {
  // :: and ::1 sit inside the IPv4-compatible range but are themselves, handled by V6_BLOCKED.
  return V6_EMBEDDING_V4.some((r) => inRange(bytes, r)) ? bytes.slice(12) : null;
}

function inRange(bytes: Uint8Array, range: Range): boolean {
  if (bytes.length !== range.bytes.length) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

function v4(address: string, prefix: number, name: string): NamedRange {
  return { bytes: parseIp(address) as Uint8Array, prefix, name };
}

function v6(address: string, prefix: number, name: string): NamedRange {
  return { bytes: parseIp(address) as Uint8Array, prefix, name };
}

/**
 * The body of a response, decoded as fetch does when the server compressed it; callers apply their
 * size caps to these decoded bytes (a small gzip can expand enormously).
 */
export function decompressed(message: IncomingMessage): Readable {
  const encoding = message.headers['content-encoding']?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  // Errors reach the reader through the last stream; either side closing tears the other down.
  return decoder ? pipeline(message, decoder, () => {}) : message;
}
