// Run as a child process by tables-import-upload.test.ts (`node test/api/tables-import-child.ts`):
// the API on a database of its own (DATABASE_URL's, or an embedded one under DATA_DIR, loaded from
// PGLITE_DUMP when given), one CSV import of CSV_MB megabytes generated as it is sent, and this
// process's peak RSS growth during it, printed as one JSON line. In a process of its own, the memory
// figure is the import's alone (the test runner's heap and, embedded, an in-memory database's pages
// would swamp it).
// With STALL_AT_MB (tables-import-spools.test.ts), the upload stops after that many megabytes, the
// child prints `{"stalled": true}` and waits, its file half stored, for the test to kill it. DATA_DIR
// given is the test's (kept); otherwise a temporary one.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../../api/start.ts';
import { loadConfig } from '../../config.ts';
import { bootstrap } from '../../db/bootstrap.ts';
import { openPglite, openPostgres } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';
import { setOrganizationPlan } from '../../db/organizations.ts';
import { setQuotas } from '../../db/quotas.ts';
import { createLogger } from '../../logger.ts';

const MB = 1024 * 1024;
const FILE_BYTES = Number(process.env.CSV_MB ?? 100) * MB;
const url = process.env.DATABASE_URL;
const STALL_AT = process.env.STALL_AT_MB ? Number(process.env.STALL_AT_MB) * MB : undefined;
const dataDir = process.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'wfs-import-child-'));
const config = loadConfig({
  ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  ...(url ? { DATABASE_URL: url } : {}),
});
// Embedded: the run's migrated dump when given (a new data directory takes seconds to initialise).
const dump = process.env.PGLITE_DUMP;
const db = url
  ? openPostgres(url, { max: 5 })
  : await openPglite({
      dataDir: join(dataDir, 'db'),
      ...(dump ? { loadDataDir: new Blob([readFileSync(dump)]) } : {}),
    });

const rssKb = (field: 'VmRSS' | 'VmHWM') =>
  Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);

// Rows of about 2 KB: a name, a number, a boolean and a quoted note with commas and a doubled quote.
const NOTE = 'words, and "quoted" words, '.repeat(80);
const QUOTED_NOTE = NOTE.replaceAll('"', '""');
/** The file: whole rows, as many as `bytes` holds (the cap is the upload's: not a byte over). */
function* csvChunks(bytes: number): Generator<Buffer> {
  const header = Buffer.from('name,score,active,note\n');
  yield header;
  let sent = header.length;
  for (let i = 0; ; i++) {
    const row = Buffer.from(`row ${i},${i * 1.5},${i % 2 === 0},"${i} ${QUOTED_NOTE}"\n`);
    if (sent + row.length > bytes) return;
    sent += row.length;
    yield row;
  }
}

function multipartBody(workspaceId: string, bytes: number) {
  const boundary = `----child${randomBytes(8).toString('hex')}`;
  const pieces = (function* () {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${workspaceId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n` +
        'Content-Type: text/csv\r\n\r\n',
    );
    yield* csvChunks(bytes);
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  })();
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (STALL_AT !== undefined && sent >= STALL_AT) {
        console.log(JSON.stringify({ stalled: true }));
        // Never answers: the upload hangs here until the process is killed.
        return new Promise<void>(() => {});
      }
      const next = pieces.next();
      if (!next.done) sent += next.value.length;
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length));
    },
  });
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

try {
  await migrate(db);
  const boot = await bootstrap(db, {
    encryptionKey: config.ENCRYPTION_KEY as Buffer,
    adminToken: 'x'.repeat(32),
  });
  const workspaceId = boot.workspaceId as string;
  const [org] = await db.query<{ organization_id: string }>(
    'select organization_id from workspaces where id = $1',
    [workspaceId],
  );
  await setOrganizationPlan(db, org?.organization_id as string, 'enterprise');
  await setQuotas(db, org?.organization_id as string, {
    api: { requestsPerMinute: 100_000, maxBurst: 100_000 },
    maxRowsPerTable: 10_000_000,
  });
  const api = await startApi({ db, config, log: createLogger('silent') });
  const key = boot.apiKey as string;
  const created = await api.app.request('http://api.test/api/v1/tables', {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      workspaceId,
      name: 'big',
      schema: {
        columns: [
          { name: 'name', type: 'string', required: true },
          { name: 'score', type: 'number' },
          { name: 'active', type: 'boolean' },
          { name: 'note', type: 'string' },
        ],
      },
    }),
  });
  const tableId = ((await created.json()) as { data: { table: { id: string } } }).data.table.id;
  const importOnce = async (bytes: number) => {
    const { body, contentType } = multipartBody(workspaceId, bytes);
    const res = await api.app.request(
      new Request(`http://api.test/api/v1/tables/${tableId}/rows/import`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': contentType },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    const text = await res.text();
    if (res.status !== 200) throw new Error(`import answered ${res.status}: ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { data: { insertedCount: number } }).data.insertedCount;
  };
  if (STALL_AT !== undefined) {
    // Never settles: the test kills this process mid-upload.
    await importOnce(FILE_BYTES);
  }
  // Warm-up: JIT, the statements' plans, the first pages of the table.
  await importOnce(MB);
  // Two figures. RSS: the kernel's high-water mark, reset (clear_refs 5) where allowed, and sampled;
  // it counts garbage not yet collected (V8 collects large strings lazily) and, embedded, the
  // database's own memory. Retained: the JavaScript heap and buffers right after a full collection
  // (needs --expose-gc), sampled through the import: what the import holds on to.
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const jsBytes = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  gc();
  const retainedBefore = jsBytes();
  let retainedPeak = retainedBefore;
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {}
  const before = rssKb('VmRSS');
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssKb('VmRSS'));
  }, 10);
  const collector = setInterval(() => {
    gc();
    retainedPeak = Math.max(retainedPeak, jsBytes());
  }, 500);
  const started = performance.now();
  const inserted = await importOnce(FILE_BYTES);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  clearInterval(collector);
  peak = Math.max(peak, rssKb('VmHWM'), rssKb('VmRSS'));
  console.log(
    JSON.stringify({
      bytes: FILE_BYTES,
      inserted,
      seconds,
      rssGrowthMb: (peak - before) / 1024,
      retainedGrowthMb: (retainedPeak - retainedBefore) / MB,
      embedded: !url,
    }),
  );
  await api.close();
} finally {
  await db.close();
  if (!process.env.DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
}
