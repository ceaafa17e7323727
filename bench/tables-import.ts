// CSV in and out of a user table through the public API over real HTTP, to an API process of its own
// (api/main.ts on a local Postgres) whose memory is watched from outside:
// - import: a CSV of BENCH_CSV_MB megabytes (default 100: the upload cap) posted to
//   POST …/rows/import, beside the same rows' first BENCH_BASELINE_ROWS (default 200,000) sent as
//   JSON batches of 1,000 to POST …/rows (the batch insert both go through); rows/s, and the
//   server's peak RSS growth during the import beside the same bytes uploaded as a file (both stream
//   the body to storage; RSS growth is mostly garbage V8 has not collected yet: what an import holds
//   on to is measured by test/api/tables-import.test.ts, after full collections);
// - export: the whole table as CSV from GET …/rows/export, read as it streams, beside raw keyset
//   pages of 1,000 rows read in this process (no HTTP, no formatting); rows/s and peak RSS growth.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { setOrganizationPlan } from '../db/organizations.ts';
import { setQuotas } from '../db/quotas.ts';
import { startScratchService } from './lib/scratch-service.ts';
import { post, startApiProcess, type startServer, watched } from './lib/server-process.ts';
import { printTable, type Row } from './lib/table.ts';

const MB = 1024 * 1024;
const FILE_BYTES = Math.min(Number(process.env.BENCH_CSV_MB ?? 100) * MB, 100 * MB);
const BASELINE_ROWS = Number(process.env.BENCH_BASELINE_ROWS ?? 200_000);
const COLUMNS = [
  { name: 'name', type: 'string', required: true },
  { name: 'score', type: 'number' },
  { name: 'active', type: 'boolean' },
  { name: 'joined', type: 'date' },
  { name: 'meta', type: 'json' },
];

const person = (i: number) => ({
  name: `person ${i}, of "the bench"`,
  score: i * 1.5,
  active: i % 2 === 0,
  joined: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(),
  meta: { tags: ['a', 'b'], n: i },
});
const csvLine = (i: number) => {
  const p = person(i);
  return `"${p.name.replaceAll('"', '""')}",${p.score},${p.active},${p.joined},"${JSON.stringify(p.meta).replaceAll('"', '""')}"\n`;
};

/** The CSV's chunks (~64 KB each), as many whole rows as FILE_BYTES holds; and how many. */
function csvFile(bytes: number) {
  const header = 'name,score,active,joined,meta\n';
  let rows = 0;
  let size = header.length;
  for (;;) {
    const next = Buffer.byteLength(csvLine(rows));
    if (size + next > bytes) break;
    size += next;
    rows++;
  }
  function* chunks(): Generator<Buffer> {
    yield Buffer.from(header);
    let text = '';
    for (let i = 0; i < rows; i++) {
      text += csvLine(i);
      if (text.length >= 65_536) {
        yield Buffer.from(text);
        text = '';
      }
    }
    if (text) yield Buffer.from(text);
  }
  return { rows, size, chunks };
}

/** GETs a URL and reads the answer as it streams, counting its lines; answers them. */
function getLines(url: string, headers: Record<string, string>) {
  return new Promise<number>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        let lines = 0;
        res.on('data', (chunk: Buffer) => {
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        });
        res.on('end', () => resolve(lines));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const svc = await startScratchService();
const { db } = svc;
const results: Row[] = [];
let server: Awaited<ReturnType<typeof startServer>> | undefined;
try {
  await setOrganizationPlan(db, svc.organizationId, 'enterprise');
  await setQuotas(db, svc.organizationId, {
    api: { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 },
    maxRowsPerTable: 10_000_000,
    storageLimitBytes: 1_000_000_000_000,
  });
  server = await startApiProcess(svc.config);
  const base = server.url;
  const headers = { 'X-API-Key': svc.apiKey };
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text).data as Record<string, unknown>;
  };
  const createTable = async (name: string) =>
    (
      (
        await call('POST', '/api/v1/tables', {
          workspaceId: svc.workspaceId,
          name,
          schema: { columns: COLUMNS },
        })
      ).table as { id: string }
    ).id;
  /** POSTs the file as the multipart form an upload and an import both take. */
  const sendFile = (path: string, file: ReturnType<typeof csvFile>) => {
    const boundary = `------------------------${randomBytes(8).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${svc.workspaceId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="people-${randomBytes(4).toString('hex')}.csv"\r\n` +
        'Content-Type: text/csv\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    return post(
      `${base}${path}`,
      { ...headers, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      [head, ...file.chunks(), tail],
      head.length + file.size + tail.length,
    );
  };
  const importInto = (tableId: string, file: ReturnType<typeof csvFile>) =>
    sendFile(`/api/v1/tables/${tableId}/rows/import`, file);

  // Warm-up: JIT, plans, the first pages of a table.
  const warm = await createTable('warm');
  await importInto(warm, csvFile(MB));

  const file = csvFile(FILE_BYTES);

  // The memory baseline, first (the process then at the same point as for the import): the same
  // bytes as a file upload, which streams them to storage only.
  const uploaded = await watched(server.pid, () => sendFile('/api/v1/files', file));
  if (uploaded.result.status !== 200) throw new Error(`upload answered ${uploaded.result.status}`);

  const table = await createTable('people');
  const imported = await watched(server.pid, () => importInto(table, file));
  if (imported.result.status !== 200)
    throw new Error(`import answered ${imported.result.status}: ${imported.result.text.slice(0, 300)}`);
  const inserted = (JSON.parse(imported.result.text) as { data: { insertedCount: number } }).data
    .insertedCount;
  if (inserted !== file.rows) throw new Error(`imported ${inserted} rows of ${file.rows}`);

  // The rate baseline: the same rows as JSON batches through POST …/rows, sequentially.
  const batchTable = await createTable('people_json');
  const baselineRows = Math.min(BASELINE_ROWS, file.rows);
  const bodies: string[] = [];
  for (let at = 0; at < baselineRows; at += 1000) {
    const rows = Array.from({ length: Math.min(1000, baselineRows - at) }, (_, i) => person(at + i));
    bodies.push(JSON.stringify({ workspaceId: svc.workspaceId, rows }));
  }
  let started = performance.now();
  for (const body of bodies) {
    const res = await fetch(`${base}/api/v1/tables/${batchTable}/rows`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`batch insert: ${res.status} ${text.slice(0, 300)}`);
  }
  const batchSeconds = (performance.now() - started) / 1000;
  const mb = (FILE_BYTES / MB).toFixed(0);
  results.push(
    {
      measure: `CSV import, ${mb} MB (${file.rows} rows) in one request (rows/s)`,
      ours: file.rows / imported.seconds,
      baselineName: `POST …/rows, JSON batches of 1,000 (${baselineRows} rows)`,
      baseline: baselineRows / batchSeconds,
      higherIsBetter: true,
    },
    {
      measure: `server peak RSS growth during the ${mb} MB import (MB)`,
      ours: imported.rssGrowthMb,
      baselineName: `the same ${mb} MB uploaded to POST /api/v1/files`,
      baseline: uploaded.rssGrowthMb,
      higherIsBetter: false,
    },
  );

  // Export: the whole table as CSV, read as it streams.
  const exported = await watched(server.pid, () =>
    getLines(`${base}/api/v1/tables/${table}/rows/export?workspaceId=${svc.workspaceId}&format=csv`, headers),
  );
  // Records hold no line breaks here: lines are the header and one per row.
  if (exported.result !== file.rows + 1)
    throw new Error(`exported ${exported.result - 1} rows of ${file.rows}`);
  started = performance.now();
  let read = 0;
  for (let last = 0; ; ) {
    const page = await db.query<{ position: string; data: unknown }>(
      'select position, data from table_rows where table_id = $1 and position > $2 order by position limit 1000',
      [table, last],
    );
    read += page.length;
    if (page.length < 1000) break;
    last = Number(page.at(-1)?.position);
  }
  const rawSeconds = (performance.now() - started) / 1000;
  results.push(
    {
      measure: `CSV export of ${file.rows} rows, streamed over HTTP (rows/s)`,
      ours: file.rows / exported.seconds,
      baselineName: 'raw keyset pages of 1,000 read in process',
      baseline: read / rawSeconds,
      higherIsBetter: true,
    },
    {
      measure: `server peak RSS growth during the export (MB; the CSV is ${(file.size / MB).toFixed(0)} MB)`,
      ours: exported.rssGrowthMb,
      baselineName: 'the size of the file (MB)',
      baseline: file.size / MB,
      higherIsBetter: false,
    },
  );
  printTable('Table CSV import and export (Postgres on this machine, API in its own process)', results);
} finally {
  await server?.stop();
  await svc.dispose();
}
