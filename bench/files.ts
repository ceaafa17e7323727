// File upload through the public API over real HTTP: a 100 MB multipart upload to an API process of
// its own (api/main.ts on a local Postgres, local disk storage), beside two baselines in the same
// run: a bare node:http server (its own process too) that pipes the request body into a file, and
// the same bytes piped into a file with fs streams in this process. Reports upload throughput
// (MB/s) and each server's peak RSS growth during the upload (target for ours: at most 32 MB,
// since the file is streamed, never held). Rounds alternate the three; each side reports its
// median. RSS growth is mostly the request's buffers awaiting garbage collection (V8 frees them in
// batches, malloc may or may not hand the pages back between uploads), which the bare server shares:
// compare the two. BENCH_FILE_MB sizes the file (default 100), BENCH_ROUNDS the rounds (default 5).
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setOrganizationPlan } from '../db/organizations.ts';
import { setQuotas } from '../db/quotas.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { post, startApiProcess, startServer, watched } from './lib/server-process.ts';
import { printTable } from './lib/table.ts';

const MB = 1024 * 1024;
const FILE_BYTES = Number(process.env.BENCH_FILE_MB ?? 100) * MB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CHUNK = Buffer.alloc(MB, 'x');

/** The chunks of the file, without ever holding more than one (shared) megabyte. */
function* fileChunks(): Generator<Buffer> {
  for (let at = 0; at < FILE_BYTES; at += MB) yield CHUNK.subarray(0, Math.min(MB, FILE_BYTES - at));
}

async function main() {
  const svc = await startScratchService();
  const scratch = mkdtempSync(join(tmpdir(), 'wfs-bench-files-'));
  const servers: { stop(): Promise<void> }[] = [];
  try {
    await setOrganizationPlan(svc.db, svc.organizationId, 'enterprise');
    await setQuotas(svc.db, svc.organizationId, {
      api: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
      storageLimitBytes: 1_000_000_000_000,
    });
    const ours = await startApiProcess(svc.config);
    servers.push(ours);
    const bare = await startServer([new URL(import.meta.url).pathname, 'bare-server', scratch], process.env);
    servers.push(bare);

    let uploads = 0;
    const uploadOurs = async (bytes: number) => {
      // As curl makes them: the parser skips ahead by the boundary's length, so its length matters.
      const boundary = `------------------------${randomBytes(8).toString('hex')}`;
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${svc.workspaceId}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench-${uploads++}.bin"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const body = bytes === FILE_BYTES ? fileChunks() : [CHUNK.subarray(0, bytes)];
      const { status, text } = await post(
        `${ours.url}/api/v1/files`,
        { 'X-API-Key': svc.apiKey, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        [head, ...body, tail],
        head.length + bytes + tail.length,
      );
      if (status !== 200) throw new Error(`upload answered ${status}: ${text.slice(0, 300)}`);
      const size = (JSON.parse(text) as { data: { file: { size: number } } }).data.file.size;
      if (size !== bytes) throw new Error(`stored ${size} bytes of ${bytes}`);
    };
    const uploadBare = async () => {
      const { status } = await post(`${bare.url}/`, {}, fileChunks(), FILE_BYTES);
      if (status !== 200) throw new Error(`bare server answered ${status}`);
    };
    const pipeToFile = () =>
      pipeline(Readable.from(fileChunks()), createWriteStream(join(scratch, 'fs-pipe')));

    // Warm-up: JIT, connections, the first file of the workspace.
    for (let i = 0; i < 3; i++) await uploadOurs(MB);
    await post(`${bare.url}/`, {}, [CHUNK], MB);

    const rate = (seconds: number) => FILE_BYTES / MB / seconds;
    // The first large upload into a fresh process grows it to its working size: V8 frees the
    // request's buffers only once some 64 MB of them are garbage, and malloc keeps what it got.
    // Shown apart, beside the bare server's first upload; the rounds then measure a warm process.
    const firstOurs = await watched(ours.pid, () => uploadOurs(FILE_BYTES));
    const firstBare = await watched(bare.pid, uploadBare);

    const oursRuns: { rate: number; rss: number }[] = [];
    const bareRuns: { rate: number; rss: number }[] = [];
    const fsRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => {
          const r = await watched(ours.pid, () => uploadOurs(FILE_BYTES));
          oursRuns.push({ rate: rate(r.seconds), rss: r.rssGrowthMb });
        },
        async () => {
          const r = await watched(bare.pid, uploadBare);
          bareRuns.push({ rate: rate(r.seconds), rss: r.rssGrowthMb });
        },
        async () => {
          const started = performance.now();
          await pipeToFile();
          fsRates.push(rate((performance.now() - started) / 1000));
        },
      ];
      // Rotate which side goes first, so none always meets the warmer (or more tired) machine.
      for (let i = 0; i < sides.length; i++)
        await (sides[(i + round) % sides.length] as () => Promise<void>)();
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const mb = FILE_BYTES / MB;
    printTable(`File upload, ${mb} MB through POST /api/v1/files (median of ${ROUNDS} rounds)`, [
      {
        measure: `upload throughput, ${mb} MB over HTTP (MB/s)`,
        ours: median(oursRuns.map((r) => r.rate)),
        baselineName: 'bare node:http server piping the body to a file',
        baseline: median(bareRuns.map((r) => r.rate)),
        higherIsBetter: true,
      },
      {
        measure: `upload throughput, ${mb} MB (MB/s)`,
        ours: median(oursRuns.map((r) => r.rate)),
        baselineName: 'same bytes piped to a file with fs streams (no HTTP)',
        baseline: median(fsRates),
        higherIsBetter: true,
      },
      {
        measure: `server peak RSS growth during a ${mb} MB upload (MB; target ≤ 32)`,
        ours: median(oursRuns.map((r) => r.rss)),
        baselineName: 'bare node:http server piping the body to a file',
        baseline: median(bareRuns.map((r) => r.rss)),
        higherIsBetter: false,
      },
      {
        measure: `the same, first ${mb} MB upload into a freshly started server (MB)`,
        ours: firstOurs.rssGrowthMb,
        baselineName: 'bare server, its first upload',
        baseline: firstBare.rssGrowthMb,
        higherIsBetter: false,
      },
    ]);
    const each = (runs: { rss: number }[]) => runs.map((r) => r.rss.toFixed(1)).join(', ');
    console.log(`\nserver peak RSS growth per round (MB): ours ${each(oursRuns)}; bare ${each(bareRuns)}`);
  } finally {
    for (const s of servers) await s.stop();
    await svc.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }
}

// `node bench/files.ts bare-server <dir>`: the bare baseline server, run as a child of the bench.
if (process.argv[2] === 'bare-server') {
  const dir = process.argv[3] as string;
  let n = 0;
  const server = http.createServer((req, res) => {
    pipeline(req, createWriteStream(join(dir, `bare-${n++}`))).then(
      () => res.end('{"success":true}'),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    console.log(`listening on http://127.0.0.1:${port}`);
  });
} else {
  await main();
}
