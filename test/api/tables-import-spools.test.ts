// The CSV file an import keeps in storage while it runs is recorded, under a lease its process
// renews, so the file of a process that died mid-import is swept (api/routes/tables/import-spools.ts),
// and the file of a live import is not. A normal import, and one refused, leave
// neither a file nor a record; a live import keeps its lease renewed; a child process killed
// mid-upload leaves both, until a sweep.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it, vi } from 'vitest';
import {
  SPOOL_LEASE_SECONDS,
  startSpoolSweeper,
  sweepSpools,
} from '../../api/routes/tables/import-spools.ts';
import { type Db, openPglite } from '../../db/client.ts';
import { renewSpools } from '../../db/tables/import-spools.ts';
import { createLogger } from '../../logger.ts';
import { localStorage } from '../../storage/local.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { localBlobs } from './files-helpers.ts';
import { csvOf, importCsv } from './tables-csv-helpers.ts';
import { expectError, expectOk, makeTable, PEOPLE, tablesApi, useTablesService } from './tables-helpers.ts';

const { svc, tenant } = useTablesService();

const records = (db: Db) =>
  db.query<{ storage_key: string; held_until: Date }>(
    'select storage_key, held_until from table_import_spools',
  );

describe('in one process', () => {
  it('leaves no file and no record after an import, or one refused', async () => {
    const api = tablesApi(svc, tenant.key, tenant.workspace.id);
    const table = await makeTable(api, PEOPLE);
    const send = (csv: string) =>
      importCsv(svc, tenant.key, table.id, { workspaceId: tenant.workspace.id, csv });
    expectOk(await send(csvOf('email', 'a@x.org')));
    expectError(await send(csvOf('email,age', 'b@x.org,old')), 400);
    expectError(await send(csvOf('nope', 'x')), 400);
    expect(localBlobs(svc)).toEqual([]);
    expect(await records(svc.db)).toEqual([]);
  });

  it('sweeps only files whose lease ran out, and forgets them', async () => {
    const storage = localStorage(svc.config.DATA_DIR);
    const { Readable } = await import('node:stream');
    const key = `${tenant.workspace.id}/${crypto.randomUUID()}`;
    await storage.put(key, Readable.from([Buffer.from('name\nx\n')]), { maxBytes: 100 });
    await svc.db.query(
      `insert into table_import_spools (storage_key, held_until) values ($1, now() + interval '1 minute')`,
      [key],
    );
    // Held: not swept, now or by another process's sweep.
    expect(await sweepSpools(svc.db, storage)).toBe(0);
    expect(await storage.exists(key)).toBe(true);
    // A minute later, its lease has run out (the clock given, as a sweep takes it).
    expect(await sweepSpools(svc.db, storage, { now: new Date(Date.now() + 61_000) })).toBe(1);
    expect(await storage.exists(key)).toBe(false);
    expect(await records(svc.db)).toEqual([]);
    // A record whose file is gone already (a sweep that died halfway) is forgotten too.
    await svc.db.query(`insert into table_import_spools (storage_key, held_until) values ($1, now())`, [key]);
    expect(await sweepSpools(svc.db, storage, { now: new Date(Date.now() + 1000) })).toBe(1);
    expect(await records(svc.db)).toEqual([]);
  });
});

describe('a live import', () => {
  it('renews its lease every minute while its upload is under way, then removes its file and record', async () => {
    const api = tablesApi(svc, tenant.key, tenant.workspace.id);
    const table = await makeTable(api, PEOPLE);
    // The upload stops after its first line until the gate opens.
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const boundary = '----spooltest';
    const head =
      `--${boundary}\r\nContent-Disposition: form-data; name="workspaceId"\r\n\r\n${tenant.workspace.id}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.csv"\r\n` +
      `Content-Type: text/csv\r\n\r\nemail\r\n${'a'.repeat(64 * 1024)}@x.org\r\n`;
    const tail = `b@x.org\r\n\r\n--${boundary}--\r\n`;
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (step++ === 0) return controller.enqueue(new TextEncoder().encode(head));
        await gate;
        controller.enqueue(new TextEncoder().encode(tail));
        controller.close();
      },
    });
    // The renewal timer is the only interval this starts: faked, a minute passes at once.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const answer = svc.app.request(
        new Request(`http://api.test/api/v1/tables/${table.id}/rows/import`, {
          method: 'POST',
          headers: { 'X-API-Key': tenant.key, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
          body,
          duplex: 'half',
        } as RequestInit),
      );
      let held: { storage_key: string; held_until: Date }[] = [];
      for (let i = 0; i < 200 && !held.length; i++) {
        await new Promise((r) => setTimeout(r, 10));
        held = await records(svc.db);
      }
      expect(held).toHaveLength(1);
      // Nearly run out: a minute on, the process has renewed it for ten more.
      await svc.db.query(`update table_import_spools set held_until = now() + interval '30 seconds'`);
      await vi.advanceTimersByTimeAsync(60_000);
      // The renewal is a query of its own, on its way: waited for (on a server it has a round trip).
      let left = 0;
      for (let i = 0; i < 200 && left < SPOOL_LEASE_SECONDS - 60; i++) {
        const [row] = await svc.db.query<{ left: number }>(
          'select extract(epoch from held_until - now())::float8 as left from table_import_spools',
        );
        left = row?.left ?? 0;
        if (left < SPOOL_LEASE_SECONDS - 60) await new Promise((r) => setTimeout(r, 10));
      }
      expect(left).toBeGreaterThan(SPOOL_LEASE_SECONDS - 60);
      // Its file is not a sweep's to take.
      expect(await sweepSpools(svc.db, localStorage(svc.config.DATA_DIR))).toBe(0);
      // A lease that ran out is not renewed (a sweep may be removing the file): the store's answer.
      await svc.db.query(`update table_import_spools set held_until = now() - interval '1 second'`);
      expect(await renewSpools(svc.db, [held[0]?.storage_key as string], SPOOL_LEASE_SECONDS)).toEqual([]);
      // Held again so that the import can end: then its file and record go.
      await svc.db.query(`update table_import_spools set held_until = now() + interval '10 minutes'`);
      open();
      const res = await answer;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { insertedCount: number } }).data.insertedCount).toBe(2);
      expect(localBlobs(svc)).toEqual([]);
      expect(await records(svc.db)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a process killed mid-import', () => {
  const script = fileURLToPath(new URL('./tables-import-child.ts', import.meta.url));

  /** The child, its upload stalled after 2 MB of 20, its file half stored. */
  async function stalledChild(dataDir: string, url: string | undefined, dump: string | undefined) {
    const child = spawn(process.execPath, ['--expose-gc', script], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        CSV_MB: '20',
        STALL_AT_MB: '2',
        DATA_DIR: dataDir,
        ...(url ? { DATABASE_URL: url } : {}),
        ...(dump ? { PGLITE_DUMP: dump } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        if (out.includes('"stalled":true')) resolve();
      });
      child.on('close', (code) =>
        reject(new Error(`the child ended (${code}) before it stalled: ${out}\n${err}`)),
      );
    });
    // What it sent is stored as it arrives: wait until the half file is there.
    const root = join(dataDir, 'files');
    for (
      let i = 0;
      i < 200 && spooled(root).reduce((n, f) => n + statSync(join(root, f)).size, 0) < 1024 * 1024;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 25));
    }
    return child;
  }

  const spooled = (root: string) => {
    try {
      return readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => join(d.parentPath, d.name).slice(root.length + 1));
    } catch {
      return [];
    }
  };

  const killed = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.on('close', () => resolve());
      child.kill('SIGKILL');
    });

  it('leaves its file recorded; a sweep keeps it while the lease runs, then removes it', async () => {
    const run = inject('testDatabase');
    const dataDir = mkdtempSync(join(tmpdir(), 'wfs-spool-'));
    const root = join(dataDir, 'files');
    const storage = localStorage(dataDir);
    const log = createLogger('silent');
    try {
      if (run.kind === 'postgres') {
        const spec = await createTestDatabase();
        try {
          const child = await stalledChild(dataDir, spec.url, undefined);
          const [held] = await records(spec.db);
          expect(held).toBeDefined();
          expect(spooled(root)).toEqual([held?.storage_key]);
          // Alive and mid-upload: no sweep of this process (or any other) touches it.
          expect(await sweepSpools(spec.db, storage)).toBe(0);
          expect(spooled(root)).toHaveLength(1);
          await killed(child);
          // Dead: its file stays until its lease has run out (no process can tell dead from slow)…
          expect(await sweepSpools(spec.db, storage)).toBe(0);
          expect(spooled(root)).toHaveLength(1);
          // …then any sweep removes it and forgets it.
          const later = new Date(Date.now() + (SPOOL_LEASE_SECONDS + 1) * 1000);
          expect(await sweepSpools(spec.db, storage, { now: later })).toBe(1);
          expect(spooled(root)).toEqual([]);
          expect(await records(spec.db)).toEqual([]);
        } finally {
          await spec.close();
        }
      } else {
        const child = await stalledChild(dataDir, undefined, run.dumpFile);
        expect(spooled(root)).toHaveLength(1);
        await killed(child);
        // Embedded, one process owns the database: the next start sweeps whatever is recorded.
        const db = await openPglite({ dataDir: join(dataDir, 'db') });
        try {
          const [held] = await records(db);
          expect(spooled(root)).toEqual([held?.storage_key]);
          const sweeper = startSpoolSweeper({ db, storage, log });
          await sweeper.close();
          expect(spooled(root)).toEqual([]);
          expect(await records(db)).toEqual([]);
        } finally {
          await db.close();
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
