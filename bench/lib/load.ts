// A load generator, run as its own process so the client's work does not share the measured
// server's main thread: POSTs (or GETs) one URL at a fixed concurrency and prints timings as JSON.
// Usage: node bench/load.ts '{"url": …, "method": "POST", "headers": {…}, "body": "…", "count": 1000, "concurrency": 64}'
//
// It speaks HTTP/1.1 on its own keep-alive sockets, as wrk and autocannon do, rather than through
// node:http's client: on the 2 cores a bench shares with the service and Postgres, that client cost
// 290 to 400 µs of CPU a request (55 % of a core at 1,800 requests/s), taken from the service it
// measured; this one costs a fraction of that. Each connection has one request in flight at a time.
import net from 'node:net';
import { parseResponse, type Response } from './http-response.ts';

interface LoadSpec {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** A header given a fresh random value on every request (an Idempotency-Key). */
  uniqueHeader?: string;
  /**
   * The body varies by request: `{{i}}` is the request's number in its run, `{{i%M}}` that number
   * modulo M, `{{run}}` the run (`warmup` or `timed`), so that the warmup writes other rows.
   */
  indexed?: boolean;
  count: number;
  concurrency: number;
  /** Requests before timing starts. */
  warmup: number;
}

const spec = JSON.parse(process.argv[2] as string) as LoadSpec;
const target = new URL(spec.url);
const port = Number(target.port || 80);

const bodyOf = (run: string, i: number) =>
  spec.indexed
    ? spec.body?.replaceAll(/\{\{(run|i)(?:%(\d+))?\}\}/g, (_, name: string, m?: string) =>
        name === 'run' ? run : String(m ? i % Number(m) : i),
      )
    : spec.body;

// Everything of a request but its varying header and its body, written once.
const head =
  `${spec.method} ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
  Object.entries(spec.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');

function request(body: string | undefined): string {
  const unique = spec.uniqueHeader ? `${spec.uniqueHeader}: ${crypto.randomUUID()}\r\n` : '';
  if (body === undefined) return `${head}${unique}\r\n`;
  return `${head}${unique}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** One keep-alive connection, one request at a time. */
class Connection {
  private socket: net.Socket | undefined;
  private received: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (r: Response) => void; reject: (e: Error) => void } | undefined;

  private connect() {
    const socket = net.connect({ host: target.hostname, port, noDelay: true });
    socket.on('data', (chunk: Buffer) => {
      this.received = this.received.length ? Buffer.concat([this.received, chunk]) : chunk;
      const parsed = parseResponse(this.received);
      if (!parsed) return;
      this.received = this.received.subarray(parsed.length);
      const waiting = this.waiting;
      this.waiting = undefined;
      if (parsed.response.close) this.drop();
      waiting?.resolve(parsed.response);
    });
    const fail = (err?: Error) => {
      this.drop();
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(err ?? new Error('the server closed the connection'));
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
    this.socket = socket;
    return socket;
  }

  private drop() {
    this.socket?.removeAllListeners();
    this.socket?.on('error', () => {});
    this.socket?.destroy();
    this.socket = undefined;
    this.received = Buffer.alloc(0);
  }

  send(text: string): Promise<Response> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      (this.socket ?? this.connect()).write(text);
    });
  }

  close() {
    this.drop();
  }
}

async function once(connection: Connection, body: string | undefined): Promise<number> {
  const started = performance.now();
  const res = await connection.send(request(body));
  if (res.status >= 300 || res.body.includes('"success":false'))
    throw new Error(`${res.status} ${res.body.slice(0, 300)}`);
  return performance.now() - started;
}

const connections = Array.from({ length: spec.concurrency }, () => new Connection());

async function run(name: string, count: number) {
  const samples: number[] = [];
  let next = 0;
  await Promise.all(
    connections.map(async (connection) => {
      while (next < count) samples.push(await once(connection, bodyOf(name, next++)));
    }),
  );
  return samples;
}

await run('warmup', spec.warmup);
const started = performance.now();
const cpuBefore = process.cpuUsage();
const samples = await run('timed', spec.count);
const cpu = process.cpuUsage(cpuBefore);
const seconds = (performance.now() - started) / 1000;
samples.sort((a, b) => a - b);
const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
console.log(
  JSON.stringify({
    rate: spec.count / seconds,
    p50: at(0.5),
    p99: at(0.99),
    clientCpuUs: (cpu.user + cpu.system) / spec.count,
  }),
);
for (const connection of connections) connection.close();
