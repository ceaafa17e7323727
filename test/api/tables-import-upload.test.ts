// CSV import through the API, the request around the file: who may import (read-only keys, other
// workspaces and tenants), malformed uploads and bad fields, the 100 MB cap, retries under an
// Idempotency-Key, no copy of a file left in storage, and a 100 MB file imported under a memory bound.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.ts';
import { addPerson, createTenant } from '../helpers/service.ts';
import { localBlobs } from './files-helpers.ts';
import { csvOf, type ImportOptions, importCsv } from './tables-csv-helpers.ts';
import {
  expectError,
  expectIssues,
  expectOk,
  expectRowCount,
  makeTable,
  PEOPLE,
  tablesApi,
  useTablesService,
} from './tables-helpers.ts';

const { svc, tenant, api } = useTablesService();

const people = () => makeTable(api, PEOPLE);
/** An import by the tenant's owner into its workspace. */
const send = (tableId: string, o: Omit<ImportOptions, 'workspaceId'> & { workspaceId?: string }) =>
  importCsv(svc, tenant.key, tableId, { workspaceId: tenant.workspace.id, ...o });

describe('who may import, and what the upload must be', () => {
  it('refuses a read-only key (403) whichever way round the fields come, and keeps no bytes', async () => {
    const table = await people();
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const blobs = localBlobs(svc).length;
    for (const order of ['fieldsFirst', 'fileFirst'] as const) {
      const res = await importCsv(svc, reader.key, table.id, {
        workspaceId: tenant.workspace.id,
        csv: csvOf('email', 'a@x.org'),
        order,
      });
      expectError(res, 403, /write permission/);
    }
    expect(localBlobs(svc)).toHaveLength(blobs);
    await expectRowCount(api, table.id, 0);
  });

  it("answers 404 for a table of another workspace, and 403 or 404 for another tenant's", async () => {
    const table = await people();
    const other = await createTenant(svc.admin);
    const otherApi = tablesApi(svc, other.key, other.workspace.id);
    const theirs = await makeTable(otherApi, PEOPLE);
    // Our workspace, their table: not found.
    expectError(await send(theirs.id, { csv: csvOf('email', 'a@x.org') }), 404, /Table not found/);
    // Their workspace named with our key: no access.
    expectError(
      await send(theirs.id, { csv: csvOf('email', 'a@x.org'), workspaceId: other.workspace.id }),
      403,
    );
    // Their key on our table, in their workspace: not found.
    const res = await importCsv(svc, other.key, table.id, {
      workspaceId: other.workspace.id,
      csv: csvOf('email', 'a@x.org'),
    });
    expectError(res, 404, /Table not found/);
    await expectRowCount(api, table.id, 0);
    await expectRowCount(otherApi, theirs.id, 0);
  });

  it('refuses bad ids, a bad mode, missing parts and a body that is no form, with 400', async () => {
    const table = await people();
    const file = csvOf('email', 'a@x.org');
    expectIssues(await send('not-a-uuid', { csv: file }), [['tableId']]);
    expectError(await send(crypto.randomUUID(), { csv: file }), 404, /Table not found/);
    expectIssues(await send(table.id, { csv: file, workspaceId: 'nope' }), [['workspaceId']]);
    expectIssues(await send(table.id, { csv: file, mode: 'some' }), [['mode']]);
    expectIssues(await send(table.id, { csv: file, mode: 'some', order: 'fileFirst' }), [['mode']]);
    expectIssues(await importCsv(svc, tenant.key, table.id, { csv: file }), [['workspaceId']]);
    const json = await svc.call('POST', `/api/v1/tables/${table.id}/rows/import`, {
      key: tenant.key,
      body: { workspaceId: tenant.workspace.id },
    });
    expectError(json, 400, /multipart\/form-data/);
    await expectRowCount(api, table.id, 0);
    // Whatever was refused, no copy of a file stays in storage.
    expect(localBlobs(svc)).toEqual([]);
  });

  it('refuses a file over 100 MB with 413, keeping nothing', async () => {
    const table = await people();
    const line = Buffer.from(`${'a'.repeat(1023)}\n`);
    const res = await send(table.id, {
      csv: function* () {
        yield Buffer.from('email\n');
        for (let i = 0; i < 100 * 1024 + 1; i++) yield line;
      },
    });
    expectError(res, 413, /size limit of 104857600 bytes/);
    await expectRowCount(api, table.id, 0);
    expect(localBlobs(svc)).toEqual([]);
  });

  it('imports once under an Idempotency-Key: a retry replays the answer, another file under it is a 422', async () => {
    const table = await people();
    const headers = { 'Idempotency-Key': `import-${Math.random()}` };
    const file = csvOf('email', 'a@x.org', 'b@x.org');
    const first = await send(table.id, { csv: file, headers });
    expectOk(first);
    const again = await send(table.id, { csv: file, headers });
    expectOk(again);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expectError(await send(table.id, { csv: csvOf('email', 'c@x.org'), headers }), 422);
    await expectRowCount(api, table.id, 2);
  });
});

describe('a 100 MB file', () => {
  // In a process of its own (see tables-import-child.ts), on the database this run uses.
  it('imports with bounded memory: retained memory flat, RSS growth far below the file', async () => {
    // Postgres runs: a database of the run's server; embedded: the child makes its own.
    const run = inject('testDatabase');
    const spec = run.kind === 'postgres' ? await createTestDatabase() : null;
    const url = spec?.url;
    const dump = run.kind === 'pglite' ? run.dumpFile : undefined;
    try {
      const script = fileURLToPath(new URL('./tables-import-child.ts', import.meta.url));
      const child = spawn(process.execPath, ['--expose-gc', script], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          CSV_MB: '100',
          ...(url ? { DATABASE_URL: url } : {}),
          ...(dump ? { PGLITE_DUMP: dump } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (err += d));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code, `${out}\n${err}`).toBe(0);
      const result = JSON.parse(out.trim().split('\n').at(-1) as string);
      console.info(`100 MB CSV import: ${JSON.stringify(result)}`);
      expect(result.bytes).toBe(104_857_600);
      expect(result.inserted).toBeGreaterThan(40_000);
      // A file held in memory would retain 100 MB or more; the import holds a batch at a time.
      expect(result.retainedGrowthMb).toBeLessThan(48);
      // RSS counts garbage not yet collected: generous. Embedded, it also counts the database's
      // own memory in this process (PGlite's WASM heap: its buffers and WAL as the rows go in), which
      // grew by 347 to 454 MB on Node 24.21 (and less before); the retained figure above is what
      // guards the import there.
      expect(result.rssGrowthMb).toBeLessThan(result.embedded ? 768 : 256);
    } finally {
      await spec?.close();
    }
  }, 180_000);
});
