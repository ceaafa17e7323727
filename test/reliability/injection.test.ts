// SQL metacharacters in every place input meets SQL: table and column names, row values, filters
// and sorts (query, bulk update, delete by filter, export), knowledge tag names, tag filter values and search
// queries, file names (uploaded, refused as taken, deleted) and workspace names. Each is stored and
// answered verbatim, or refused with a 400 `{error, details?}`: never executed, never a 500, and a
// refusal changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upload } from '../api/files-helpers.ts';
import { ingest } from '../api/knowledge-helpers.ts';
import {
  type ApiResponse,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';
import { fingerprint } from './fuzz-helpers.ts';

/** SQL metacharacters and classic injections; none has leading or trailing blanks (names are trimmed). */
const EVIL = [
  "'",
  "O'Brien",
  '";--',
  '$1',
  '$$x$$',
  '\\',
  'a\\',
  '%',
  '_',
  '%_\\%',
  ') or 1=1 --',
  "' or '1'='1",
  "'); drop table users; --",
  '\u2018quoted\u2019 \u201cdouble\u201d \u02bc',
  '*/ select 1 /*',
  '\\x00',
  '${1}',
  ':name ?',
];
/** Text Postgres cannot hold (NUL, a lone surrogate): refused with a 400, never a 500. */
const NUL = ['a\u0000b', '\u0000', 'x\ud800y'];

let svc: TestService;
let tenant: Tenant;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({
    orgId: tenant.org.id,
    api: { requestsPerMinute: 1_000_000, maxBurst: 1_000_000 },
  });
  key = tenant.key;
  workspaceId = tenant.workspace.id;
}, 60_000);

afterAll(async () => {
  console.log(`injection: ${sent} requests sent`);
  await svc?.close();
});

/** Requests sent, for the report. */
let sent = 0;
const call = (method: string, path: string, body?: unknown, query?: Record<string, string | number>) => {
  sent++;
  return svc.call(method, path, {
    key,
    ...(body !== undefined ? { body } : {}),
    ...(query ? { query } : {}),
  });
};

function expect400(res: ApiResponse, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
  expect(typeof res.body.error).toBe('string');
  expect(Object.keys(res.body).every((k) => k === 'error' || k === 'details')).toBe(true);
}

function expect200(res: ApiResponse, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
}

/** Runs fn and asserts it left every stored row as it was. */
async function unchanged(fn: () => Promise<void>) {
  const before = await fingerprint(svc);
  await fn();
  expect(await fingerprint(svc)).toEqual(before);
}

describe('tables', () => {
  let tableId: string;
  /** The id of the row holding each EVIL value in `s` (and as key and value in `j`). */
  const rowOf = new Map<string, string>();
  const rows = `/api/v1/tables/{id}/rows`;
  const rowsPath = () => rows.replace('{id}', tableId);

  beforeAll(async () => {
    const res = await call('POST', '/api/v1/tables', {
      workspaceId,
      name: 'evil',
      description: EVIL.join(' '),
      schema: {
        columns: [
          { name: 's', type: 'string', unique: true },
          { name: 'j', type: 'json' },
          { name: 'n', type: 'number' },
        ],
      },
    });
    expect200(res, 'create');
    expect(res.body.data.table.description).toBe(EVIL.join(' '));
    tableId = res.body.data.table.id;
  });

  it('stores table names verbatim', async () => {
    for (const [i, evil] of EVIL.entries()) {
      const res = await call('POST', '/api/v1/tables', {
        workspaceId,
        name: `${evil}${i}`,
        schema: { columns: [{ name: 'a', type: 'string' }] },
      });
      expect200(res, `table ${JSON.stringify(evil)}`);
      expect(res.body.data.table.name).toBe(`${evil}${i}`);
      const back = await call('GET', `/api/v1/tables/${res.body.data.table.id}`, undefined, { workspaceId });
      expect(back.body.data.table.name).toBe(`${evil}${i}`);
    }
  });

  it('refuses metacharacters in column names, and unstorable table names, changing nothing', async () => {
    await unchanged(async () => {
      for (const nul of NUL) {
        const table = await call('POST', '/api/v1/tables', {
          workspaceId,
          name: nul,
          schema: { columns: [{ name: 'a', type: 'string' }] },
        });
        expect400(table, `table ${JSON.stringify(nul)}`);
      }
      // Names of the column pattern (`_`) are valid; every other one is refused.
      for (const evil of [...EVIL, ...NUL].filter((e) => !/^[a-z_][a-z0-9_]*$/.test(e))) {
        const column = await call('POST', '/api/v1/tables', {
          workspaceId,
          name: 'ok_name',
          schema: { columns: [{ name: evil, type: 'string' }] },
        });
        expect400(column, `column ${JSON.stringify(evil)}`);
        const drop = await call('DELETE', `/api/v1/tables/${tableId}/columns`, {
          workspaceId,
          columnName: evil,
        });
        expect(drop.status, `drop column ${JSON.stringify(evil)}`).toBeGreaterThanOrEqual(400);
        expect(drop.status).toBeLessThan(500);
      }
    });
  });

  it('stores row values (and JSON keys) verbatim', async () => {
    for (const [i, evil] of EVIL.entries()) {
      const res = await call('POST', rowsPath(), {
        workspaceId,
        data: { s: evil, j: { [evil]: evil }, n: i },
      });
      expect200(res, `insert ${JSON.stringify(evil)}`);
      expect(res.body.data.row.data).toEqual({ s: evil, j: { [evil]: evil }, n: i });
      rowOf.set(evil, res.body.data.row.id);
      const back = await call('GET', `${rowsPath()}/${res.body.data.row.id}`, undefined, { workspaceId });
      expect200(back, 'get row');
      expect(back.body.data.row.data).toEqual({ s: evil, j: { [evil]: evil }, n: i });
    }
  });

  it('refuses NUL in row values, changing nothing', async () => {
    await unchanged(async () => {
      for (const nul of NUL) {
        expect400(await call('POST', rowsPath(), { workspaceId, data: { s: nul } }), 'NUL value');
        expect400(await call('POST', rowsPath(), { workspaceId, data: { j: { [nul]: 1 } } }), 'NUL key');
      }
    });
  });

  const query = (filter: unknown, sort?: unknown) =>
    call('GET', rowsPath(), undefined, {
      workspaceId,
      limit: 1000,
      filter: JSON.stringify(filter),
      ...(sort !== undefined ? { sort: JSON.stringify(sort) } : {}),
    });

  /** An export (JSONL) of the rows a filter selects: its answer, and the `s` of each row. */
  const exported = async (filter: unknown) => {
    sent++;
    const url = new URL(`http://api.test${rowsPath()}/export`);
    url.searchParams.set('workspaceId', workspaceId);
    url.searchParams.set('format', 'jsonl');
    url.searchParams.set('filter', JSON.stringify(filter));
    const res = await svc.app.request(url.toString(), { headers: { 'X-API-Key': key } });
    const text = await res.text();
    const lines = res.status === 200 ? text.split('\n').filter(Boolean) : [];
    const body = res.status === 200 ? null : JSON.parse(text);
    return { status: res.status, body, values: lines.map((l) => (JSON.parse(l) as { s: string }).s) };
  };

  it('exports exactly the rows a literal filter matches, and refuses metacharacters as its columns', async () => {
    for (const evil of EVIL) {
      const res = await exported({ s: { contains: evil } });
      expect(res.status, `export contains ${JSON.stringify(evil)}`).toBe(200);
      expect(res.values.sort(), `export contains ${evil}`).toEqual(
        EVIL.filter((s) => s.includes(evil)).sort(),
      );
    }
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL]) {
        const res = await exported({ [evil]: 'x' });
        expect400(res as unknown as ApiResponse, `export filter column ${JSON.stringify(evil)}`);
      }
    });
  });

  it('matches filter values literally: eq, in, contains, startsWith, endsWith', async () => {
    for (const evil of EVIL) {
      const eq = await query({ s: evil });
      expect200(eq, `eq ${JSON.stringify(evil)}`);
      expect(eq.body.data.rows.map((r: { id: string }) => r.id)).toEqual([rowOf.get(evil)]);
      const inList = await query({ s: { in: [evil] } });
      expect(inList.body.data.rows.map((r: { id: string }) => r.id)).toEqual([rowOf.get(evil)]);
      for (const [op, holds] of [
        ['contains', (s: string) => s.includes(evil)],
        ['startsWith', (s: string) => s.startsWith(evil)],
        ['endsWith', (s: string) => s.endsWith(evil)],
      ] as const) {
        const res = await query({ s: { [op]: evil } });
        expect200(res, `${op} ${JSON.stringify(evil)}`);
        const expected = EVIL.filter(holds)
          .map((s) => rowOf.get(s))
          .sort();
        expect(res.body.data.rows.map((r: { id: string }) => r.id).sort(), `${op} ${evil}`).toEqual(expected);
      }
    }
  });

  it('refuses metacharacters as filter columns, operators and sort columns or directions', async () => {
    await unchanged(async () => {
      // (A lone surrogate has no URL form: it cannot reach a path.)
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        expect400(await query({ [evil]: 'x' }), `filter column ${JSON.stringify(evil)}`);
        expect400(await query({ s: { [evil]: 'x' } }), `filter operator ${JSON.stringify(evil)}`);
        expect400(await query({ s: 'x' }, [{ column: evil }]), `sort column ${JSON.stringify(evil)}`);
        expect400(
          await query({ s: 'x' }, [{ column: 's', direction: evil }]),
          `sort direction ${JSON.stringify(evil)}`,
        );
        expect400(
          await call('PUT', rowsPath(), { workspaceId, filter: { [evil]: 'x' }, data: { n: 1 } }),
          `update filter column ${JSON.stringify(evil)}`,
        );
        expect400(
          await call('PUT', rowsPath(), { workspaceId, filter: { s: 'x' }, data: { [evil]: 1 } }),
          `update data column ${JSON.stringify(evil)}`,
        );
        expect400(
          await call('DELETE', rowsPath(), { workspaceId, filter: { [evil]: 'x' } }),
          `delete filter column ${JSON.stringify(evil)}`,
        );
      }
      for (const nul of NUL) expect400(await query({ s: { contains: nul } }), 'NUL filter value');
    });
  });

  it('bulk-updates and deletes exactly the rows a literal filter matches', async () => {
    for (const evil of EVIL) {
      const res = await call('PUT', rowsPath(), {
        workspaceId,
        filter: { s: evil },
        data: { j: [evil, 'updated'] },
      });
      expect200(res, `update ${JSON.stringify(evil)}`);
      expect(res.body.data.updatedCount).toBe(1);
      const back = await call('GET', `${rowsPath()}/${rowOf.get(evil)}`, undefined, { workspaceId });
      expect(back.body.data.row.data.j).toEqual([evil, 'updated']);
    }
    // '%' and '_' match literally: only the rows that contain them go.
    const expected = EVIL.filter((s) => s.includes('%'));
    const del = await call('DELETE', rowsPath(), { workspaceId, filter: { s: { contains: '%' } } });
    expect200(del, 'delete %');
    expect(del.body.data.deletedCount).toBe(expected.length);
    const left = await query({ n: { gte: 0 } });
    expect(left.body.data.rows.map((r: { data: { s: string } }) => r.data.s).sort()).toEqual(
      EVIL.filter((s) => !s.includes('%')).sort(),
    );
  });
});

describe('workspaces', () => {
  it('stores names verbatim', async () => {
    for (const evil of EVIL) {
      const res = await call('POST', '/api/v1/workspaces', { name: evil });
      expect(res.status, `${evil}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      expect(res.body.data.workspace.name).toBe(evil);
    }
  });

  it('refuses NUL in a name, changing nothing', async () => {
    await unchanged(async () => {
      for (const nul of NUL) expect400(await call('POST', '/api/v1/workspaces', { name: nul }), 'NUL name');
    });
  });
});

describe('any JSON body or query string', () => {
  it('refuses NUL or an unpaired surrogate anywhere (values and keys, any depth) with the path, changing nothing', async () => {
    const id = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'echo',
      definition: {
        inputs: { note: { type: 'object' } },
        blocks: [{ id: 'r', type: 'response', data: '<start.note>' }],
        edges: [],
      },
    });
    await svc.admin.workflows.deploy.mutate({ id: id.id });
    await unchanged(async () => {
      for (const nul of NUL) {
        // Workflow inputs are stored as jsonb, which refuses both.
        const deep = await call('POST', `/api/workflows/${id.id}/execute`, {
          inputs: { note: { list: ['ok', { [`k${nul}`]: 1 }] } },
        });
        expect400(deep, 'NUL in a nested key');
        expect(deep.body.details[0].path).toEqual(['inputs', 'note', 'list', 1, `k${nul}`]);
        const value = await call('POST', `/api/workflows/${id.id}/execute`, { inputs: { note: { v: nul } } });
        expect400(value, 'NUL in a nested value');
        expect(value.body.details[0].path).toEqual(['inputs', 'note', 'v']);
        expect400(
          await call('GET', '/api/v1/logs', undefined, { workspaceId, triggers: nul }),
          'NUL in a query',
        );
      }
    });
  });
});

describe('files', () => {
  it('stores file names verbatim', async () => {
    for (const [i, evil] of EVIL.entries()) {
      const name = `${evil}${i}.txt`;
      const res = await upload(svc, key, { workspaceId, name, content: Buffer.from(`file ${i}`) });
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.file.name ?? res.body.data.name).toBe(name);
    }
    const list = await call('GET', '/api/v1/files', undefined, { workspaceId });
    expect200(list, 'list files');
    const names = JSON.stringify(list.body);
    for (const [i, evil] of EVIL.entries())
      expect(names).toContain(JSON.stringify(`${evil}${i}.txt`).slice(1, -1));
  });

  it('names the holder of an evil name in the 409 verbatim, and deleting it frees exactly that name', async () => {
    const list = async () =>
      (
        (await call('GET', '/api/v1/files', undefined, { workspaceId })).body.data.files as {
          id: string;
          name: string;
        }[]
      ).map((f) => f.name);
    for (const [i, evil] of EVIL.entries()) {
      const name = `${evil}${i}.txt`;
      const holder = (await call('GET', '/api/v1/files', undefined, { workspaceId })).body.data.files.find(
        (f: { name: string }) => f.name === name,
      );
      const again = await upload(svc, key, { workspaceId, name, content: Buffer.from('again') });
      expect(again.status, JSON.stringify(again.body)).toBe(409);
      expect(again.body.error).toBe(
        `A file named "${name}" already exists in this workspace (id ${holder.id}): delete it first with DELETE /api/v1/files/${holder.id}`,
      );
      const before = await list();
      const res = await call('DELETE', `/api/v1/files/${holder.id}`, undefined, { workspaceId });
      expect200(res, `delete ${name}`);
      expect(res.body.data.message).toBe(`File ${name} deleted`);
      expect(await list()).toEqual(before.filter((n) => n !== name));
      expect200(
        await upload(svc, key, { workspaceId, name, content: Buffer.from('again') }),
        `re-upload ${name}`,
      );
    }
  });

  it('refuses NUL in a file name, changing nothing', async () => {
    await unchanged(async () => {
      // Multipart names travel as UTF-8 bytes, so a lone surrogate cannot be sent: NUL alone here.
      for (const nul of NUL.filter((n) => n.includes('\u0000'))) {
        const res = await upload(svc, key, { workspaceId, name: `${nul}.txt` });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
    });
  });
});

describe('knowledge', () => {
  it('stores knowledge base names and descriptions verbatim, refusing unstorable text', async () => {
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: 'plain' });
    for (const evil of EVIL) {
      const res = await call('PUT', `/api/v1/knowledge/${kb.id}`, {
        workspaceId,
        name: evil,
        description: evil,
      });
      expect200(res, `kb ${JSON.stringify(evil)}`);
      expect(res.body.data.knowledgeBase ?? res.body.data).toMatchObject({ name: evil, description: evil });
    }
    await unchanged(async () => {
      for (const nul of NUL) {
        expect400(await call('PUT', `/api/v1/knowledge/${kb.id}`, { workspaceId, name: nul }), 'kb name');
        expect400(
          await call('PUT', `/api/v1/knowledge/${kb.id}`, { workspaceId, description: nul }),
          'kb description',
        );
      }
    });
  });

  let kbId: string;
  const TAGS = ["'", '";--', '\\', '%', '_', '%_\\%'];

  beforeAll(async () => {
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: "kb'; --" });
    kbId = kb.id as string;
    for (const name of TAGS)
      await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kbId, name, type: 'text' });
    const doc = await ingest(svc, key, kbId, {
      workspaceId,
      name: "it's 100%_done.txt",
      content: 'A short note about sourdough bread and quotes.',
    });
    expect(doc.processingStatus, doc.processingError ?? '').toBe('completed');
    // Each tag holds its own name as its value.
    await svc.admin.knowledge.setDocumentTags.mutate({
      documentId: doc.id,
      tags: Object.fromEntries(TAGS.map((t) => [t, t])),
    });
  }, 60_000);

  const search = (body: Record<string, unknown>) =>
    call('POST', '/api/v1/knowledge/search', { workspaceId, knowledgeBaseIds: [kbId], ...body });

  it('matches tag names and values literally', async () => {
    for (const tag of TAGS) {
      const eq = await search({ tagFilters: [{ tagName: tag, operator: 'eq', value: tag }] });
      expect200(eq, `eq ${tag}`);
      expect(eq.body.data.results).toHaveLength(1);
      const contains = await search({ tagFilters: [{ tagName: tag, operator: 'contains', value: tag }] });
      expect(contains.body.data.results).toHaveLength(1);
      // A value that is the tag with a wildcard-looking suffix must not match.
      for (const op of ['eq', 'starts_with', 'contains']) {
        const miss = await search({ tagFilters: [{ tagName: tag, operator: op, value: `${tag}%_x` }] });
        expect200(miss, `${op} ${tag}%_x`);
        expect(miss.body.data.results, `${op} ${tag}`).toHaveLength(0);
      }
    }
    // '%' and '_' are not wildcards: no tag value contains '_%'.
    const wild = await search({ tagFilters: [{ tagName: '%', operator: 'contains', value: '_%' }] });
    expect(wild.body.data.results).toHaveLength(0);
  });

  it('refuses unknown tag names and NUL values; searches any query text', async () => {
    await unchanged(async () => {
      for (const evil of EVIL.filter((e) => !TAGS.includes(e))) {
        const res = await search({ tagFilters: [{ tagName: evil, operator: 'eq', value: 'x' }] });
        expect400(res, `tag ${evil}`);
      }
      for (const nul of NUL) {
        const res = await search({ tagFilters: [{ tagName: TAGS[0], operator: 'eq', value: nul }] });
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
        if (res.status !== 200) expect400(res, 'NUL tag value');
      }
      // (A lone surrogate has no URL form: it cannot reach a path.)
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        for (const searchMode of ['vector', 'hybrid']) {
          const res = await search({ query: evil, searchMode });
          expect(
            res.status,
            `${searchMode} ${JSON.stringify(evil)}: ${JSON.stringify(res.body)}`,
          ).toBeLessThan(500);
          if (res.status !== 200) expect400(res, `query ${JSON.stringify(evil)}`);
        }
        const docs = await call('GET', `/api/v1/knowledge/${kbId}/documents`, undefined, {
          workspaceId,
          search: evil,
        });
        expect(
          docs.status,
          `documents search ${JSON.stringify(evil)}: ${JSON.stringify(docs.body)}`,
        ).toBeLessThan(500);
        if (docs.status === 200) {
          const expected = "it's 100%_done.txt".toLowerCase().includes(evil.toLowerCase()) ? 1 : 0;
          expect(docs.body.data.documents, `documents search ${JSON.stringify(evil)}`).toHaveLength(expected);
        } else expect400(docs, 'documents search');
      }
    });
  });
});

describe('executions', () => {
  it('refuses metacharacters as the workflow or execution id of a cancel with a 400, changing nothing', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'cancel target',
      definition: { blocks: [{ id: 'r', type: 'response', data: { ok: true } }] },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const started = await call('POST', `/api/workflows/${wf.id}/execute`, { async: true });
    const executionId = started.body.taskId as string;
    for (let i = 0; i < 200; i++) {
      if ((await call('GET', `/api/jobs/${executionId}`)).body.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await unchanged(async () => {
      // (A lone surrogate has no URL form: it cannot reach a path.)
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        const id = encodeURIComponent(evil);
        const byExecution = await call('POST', `/api/workflows/${wf.id}/executions/${id}/cancel`);
        expect400(byExecution, `execution id ${evil}`);
        expect(byExecution.body.details[0].path).toEqual(['executionId']);
        expect400(
          await call('POST', `/api/workflows/${id}/executions/${executionId}/cancel`),
          `workflow id ${evil}`,
        );
      }
    });
  });

  it('refuses metacharacters as the ids and event cursor of an execution stream with a 400, changing nothing', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'stream target',
      definition: { blocks: [{ id: 'r', type: 'response', data: { ok: true } }] },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const started = await call('POST', `/api/workflows/${wf.id}/execute`, {});
    const executionId = started.body.executionId as string;
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        const id = encodeURIComponent(evil);
        const byExecution = await call('GET', `/api/workflows/${wf.id}/executions/${id}/stream`);
        expect400(byExecution, `stream execution id ${evil}`);
        expect(byExecution.body.details[0].path).toEqual(['executionId']);
        const byWorkflow = await call('GET', `/api/workflows/${id}/executions/${executionId}/stream`);
        expect400(byWorkflow, `stream workflow id ${evil}`);
        const byCursor = await call(
          'GET',
          `/api/workflows/${wf.id}/executions/${executionId}/stream`,
          undefined,
          { from: evil },
        );
        expect400(byCursor, `stream from ${evil}`);
        expect(byCursor.body.details[0].path).toEqual(['from']);
      }
    });
  });

  it('refuses metacharacters as the ids, cursor and status of runs, reruns, execution logs and audit entries', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'rerun target',
      definition: { blocks: [{ id: 'r', type: 'response', data: { ok: true } }] },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const started = await call('POST', `/api/workflows/${wf.id}/execute`, {});
    const executionId = started.body.executionId as string;
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        const id = encodeURIComponent(evil);
        const runs = await call('GET', `/api/v1/workflows/${id}/runs`);
        expect400(runs, `runs of ${evil}`);
        expect(runs.body.details[0].path).toEqual(['workflowId']);
        for (const name of ['cursor', 'status']) {
          const bad = await call('GET', `/api/v1/workflows/${wf.id}/runs`, undefined, { [name]: evil });
          expect400(bad, `runs ${name} ${evil}`);
          expect(bad.body.details[0].path).toEqual([name]);
        }
        const rerun = await call('POST', `/api/v1/workflows/${wf.id}/executions/${id}/rerun`, {});
        expect400(rerun, `rerun of ${evil}`);
        expect(rerun.body.details[0].path).toEqual(['executionId']);
        expect400(
          await call('POST', `/api/v1/workflows/${id}/executions/${executionId}/rerun`, {}),
          `rerun in workflow ${evil}`,
        );
        const log = await call('GET', `/api/v1/logs/executions/${id}`);
        expect400(log, `execution log ${evil}`);
        expect(log.body.details[0].path).toEqual(['executionId']);
        const audit = await call('GET', `/api/v1/audit-logs/${id}`);
        expect400(audit, `audit entry ${evil}`);
        expect(audit.body.details[0].path).toEqual(['id']);
      }
    });
  });

  it('refuses metacharacters as the ids or field names of a resume with a 400, changing nothing; values are data', async () => {
    const wf = await svc.admin.workflows.create.mutate({
      workspaceId,
      name: 'resume target',
      definition: {
        blocks: [
          { id: 'ask', type: 'approval', message: 'ok?', fields: { note: { type: 'string' } } },
          { id: 'r', type: 'response', data: '<ask.data.note>' },
        ],
        edges: [{ from: 'ask', to: 'r', branch: 'approved' }],
      },
    });
    await svc.admin.workflows.deploy.mutate({ id: wf.id });
    const started = await call('POST', `/api/workflows/${wf.id}/execute`, { async: true });
    const executionId = started.body.taskId as string;
    let pause: { contextId: string; resumeUrl: string } | undefined;
    for (let i = 0; i < 400 && !pause; i++) {
      pause = (await call('GET', `/api/jobs/${executionId}`)).body.metadata?.pause;
      if (!pause) await new Promise((r) => setTimeout(r, 25));
    }
    if (!pause) throw new Error('the execution never paused');
    const url = pause.resumeUrl;
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        const id = encodeURIComponent(evil);
        const paths = [
          `/api/resume/${id}/${executionId}/${pause.contextId}`,
          `/api/resume/${wf.id}/${id}/${pause.contextId}`,
          `/api/resume/${wf.id}/${executionId}/${id}`,
        ];
        for (const path of paths) expect400(await call('POST', path, { approved: true }), `resume ${path}`);
        expect400(await call('POST', url, { approved: true, data: { [evil]: 'x' } }), `field name ${evil}`);
        expect400(await call('GET', `/api/workflows/${id}/paused`), `paused list ${evil}`);
      }
    });
    const evil = EVIL.join(' ');
    expect((await call('POST', url, { approved: true, data: { note: evil } })).status).toBe(202);
    let job: ApiResponse | undefined;
    for (let i = 0; i < 400 && job?.body.status !== 'completed'; i++) {
      job = await call('GET', `/api/jobs/${executionId}`);
      if (job.body.status !== 'completed') await new Promise((r) => setTimeout(r, 25));
    }
    expect(job?.body.output).toBe(evil);
  });
});

describe('workflows (v1)', () => {
  const definition = { inputs: {}, blocks: [{ id: 'r', type: 'response', data: { ok: true } }], edges: [] };

  it('stores names and descriptions verbatim (create, update, import)', async () => {
    for (const evil of EVIL) {
      const made = await call('POST', '/api/v1/workflows', {
        workspaceId,
        name: evil,
        description: evil,
        definition,
      });
      expect(made.status, `${evil}: ${JSON.stringify(made.body)}`).toBe(201);
      expect(made.body.data).toMatchObject({ name: evil, description: evil });
      const changed = await call('PUT', `/api/v1/workflows/${made.body.data.id}`, { name: `${evil}2` });
      expect200(changed, `update ${evil}`);
      expect(changed.body.data.name).toBe(`${evil}2`);
      const imported = await call('POST', '/api/v1/workflows/import', {
        workspaceId,
        workflow: { version: '1.0', workflow: { name: evil }, definition },
      });
      expect(imported.body.data.name).toBe(evil);
    }
  });

  it('refuses metacharacters as ids and cursors, and NUL in names and definitions, changing nothing', async () => {
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        const id = encodeURIComponent(evil);
        expect400(await call('GET', `/api/v1/workflows/${id}`), `id ${evil}`);
        expect400(await call('POST', `/api/v1/workflows/${id}/deploy`), `deploy ${evil}`);
        expect400(
          await call('GET', '/api/v1/workflows', undefined, { workspaceId, cursor: evil }),
          `cursor ${evil}`,
        );
      }
      for (const nul of NUL) {
        expect400(
          await call('POST', '/api/v1/workflows', { workspaceId, name: nul, definition }),
          'NUL name',
        );
        const inDefinition = await call('POST', '/api/v1/workflows', {
          workspaceId,
          name: 'n',
          definition: { ...definition, blocks: [{ id: 'r', type: 'response', data: { [nul]: 1 } }] },
        });
        expect400(inDefinition, 'NUL in a definition');
      }
      const yaml = await svc.app.request('http://api.test/api/v1/workflows', {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/yaml' },
        body: `workspaceId: ${workspaceId}\nname: "a\\0b"\ndefinition: {blocks: []}\n`,
      });
      expect(yaml.status).toBe(400);
    });
  });
  it('refuses metacharacters as folder ids (list, create, update, import), changing nothing', async () => {
    const made = await call('POST', '/api/v1/workflows', { workspaceId, name: 'folder target', definition });
    await unchanged(async () => {
      for (const evil of [...EVIL, ...NUL].filter((s) => s.isWellFormed())) {
        expect400(
          await call('GET', '/api/v1/workflows', undefined, { workspaceId, folderId: evil }),
          `list ${evil}`,
        );
        const body = { workspaceId, name: 'n', folderId: evil, definition };
        expect400(await call('POST', '/api/v1/workflows', body), `create ${evil}`);
        expect400(
          await call('PUT', `/api/v1/workflows/${made.body.data.id}`, { folderId: evil }),
          `update ${evil}`,
        );
        expect400(
          await call('POST', '/api/v1/workflows/import', {
            workspaceId,
            workflow: definition,
            folderId: evil,
          }),
          `import ${evil}`,
        );
      }
    });
  });
});

describe('knowledge tags, tag filters, chunks and text documents over the API', () => {
  it('keeps tag names, filter values, chunk content and text verbatim; refuses what Postgres cannot hold', async () => {
    const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: 'evil api' });
    const kbPath = `/api/v1/knowledge/${kb.id}`;
    const names = EVIL.slice(0, 7);
    for (const name of names)
      expect200(await call('POST', `${kbPath}/tags`, { workspaceId, name, type: 'text' }), name);
    const listed = await call('GET', `${kbPath}/tags`, undefined, { workspaceId });
    expect(listed.body.data.tags.map((t: { name: string }) => t.name)).toEqual(names);
    const text = `Evil text ${EVIL.join(' ')}`;
    const created = await call('POST', `${kbPath}/documents`, { workspaceId, name: "it's %_.md", text });
    expect200(created, 'text document');
    const docId = created.body.data.document.id as string;
    await settledDocument(docId);
    const tags = Object.fromEntries(names.map((n) => [n, n]));
    expect200(await call('PATCH', `${kbPath}/documents/${docId}`, { workspaceId, tags }), 'tags');
    for (const name of names) {
      const hit = await call('GET', `${kbPath}/documents`, undefined, { workspaceId, [`tag.${name}`]: name });
      expect200(hit, `tag.${name}`);
      expect(hit.body.data.documents, `tag.${name}`).toHaveLength(1);
      const miss = await call('GET', `${kbPath}/documents`, undefined, {
        workspaceId,
        [`tag.${name}`]: `${name}%_x`,
      });
      expect(miss.body.data.documents, `tag.${name} miss`).toHaveLength(0);
    }
    const evilChunk = await call('POST', `${kbPath}/documents/${docId}/chunks`, {
      workspaceId,
      content: EVIL.join(' '),
    });
    expect200(evilChunk, 'chunk');
    expect(evilChunk.body.data.chunk.content).toBe(EVIL.join(' '));
    for (const evil of EVIL) {
      const found = await call('GET', `${kbPath}/documents/${docId}/chunks`, undefined, {
        workspaceId,
        search: evil,
      });
      expect200(found, `chunk search ${evil}`);
      expect(found.body.data.chunks.length, `chunk search ${evil}`).toBeGreaterThan(0);
    }
    await unchanged(async () => {
      for (const evil of EVIL.filter((e) => !names.includes(e))) {
        expect400(
          await call('GET', `${kbPath}/documents`, undefined, { workspaceId, [`tag.${evil}`]: 'x' }),
          evil,
        );
      }
      for (const nul of NUL) {
        expect400(
          await call('POST', `${kbPath}/tags`, { workspaceId, name: nul, type: 'text' }),
          'NUL tag name',
        );
        expect400(
          await call('POST', `${kbPath}/documents`, { workspaceId, name: 'n.txt', text: nul }),
          'NUL text',
        );
        expect400(
          await call('POST', `${kbPath}/documents/${docId}/chunks`, { workspaceId, content: nul }),
          'NUL chunk',
        );
        expect400(
          await call('PATCH', `${kbPath}/documents/${docId}`, { workspaceId, filename: nul }),
          'NUL name',
        );
      }
      for (const evil of EVIL.filter((s) => !names.includes(s))) {
        const res = await call('DELETE', `${kbPath}/tags/${encodeURIComponent(evil)}`, { workspaceId });
        expect(res.status, evil).toBe(404);
      }
    });
    for (const name of names) {
      expect200(
        await call('DELETE', `${kbPath}/tags/${encodeURIComponent(name)}`, { workspaceId }),
        `delete ${name}`,
      );
    }
  }, 60_000);
});

async function settledDocument(documentId: string) {
  for (let i = 0; i < 1000; i++) {
    const doc = (await svc.admin.knowledge.getDocument.query({ documentId })) as { processingStatus: string };
    if (doc.processingStatus === 'completed') return;
    expect(doc.processingStatus).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`document ${documentId} not processed`);
}
