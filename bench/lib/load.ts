// A load generator, run as its own process so the client's work does not share the measured
// server's main thread: POSTs (or GETs) one URL at a fixed concurrency and prints timings as JSON.
// Usage: node bench/load.ts '{"url": …, "method": "POST", "headers": {…}, "body": "…", "count": 1000, "concurrency": 64}'
import http from 'node:http';

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
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
const target = new URL(spec.url);

const bodyOf = (run: string, i: number) =>
  spec.indexed
    ? spec.body?.replaceAll(/\{\{(run|i)(?:%(\d+))?\}\}/g, (_, name: string, m?: string) =>
        name === 'run' ? run : String(m ? i % Number(m) : i),
      )
    : spec.body;

function once(body: string | undefined): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: spec.method,
        headers: spec.uniqueHeader
          ? { ...spec.headers, [spec.uniqueHeader]: crypto.randomUUID() }
          : spec.headers,
        agent,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => {
          if ((res.statusCode ?? 500) >= 300 || text.includes('"success":false'))
            reject(new Error(`${res.statusCode} ${text.slice(0, 300)}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function run(name: string, count: number) {
  const samples: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      while (next < count) samples.push(await once(bodyOf(name, next++)));
    }),
  );
  return samples;
}

await run('warmup', spec.warmup);
const started = performance.now();
const samples = await run('timed', spec.count);
const seconds = (performance.now() - started) / 1000;
samples.sort((a, b) => a - b);
const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
console.log(JSON.stringify({ rate: spec.count / seconds, p50: at(0.5), p99: at(0.99) }));
agent.destroy();
