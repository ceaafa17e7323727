// Workspace access judged under concurrency: requests that arrive together have their workspace and
// permission read in one statement (db/access.ts), and each must still be judged by its own key,
// workspace and need, exactly as when it arrives alone.
import { describe, expect, it } from 'vitest';
import { addPerson } from '../helpers/service.ts';
import { useService } from '../helpers/use-service.ts';

const { svc, tenant, other } = useService({ plan: 'enterprise' });

const listTables = (key: string, workspaceId: string) =>
  svc.call('GET', '/api/v1/tables', { key, query: { workspaceId } });
const createTable = (key: string, workspaceId: string, name: string) =>
  svc.call('POST', '/api/v1/tables', {
    key,
    body: { workspaceId, name, schema: { columns: [{ name: 'n', type: 'number' }] } },
  });

describe('workspace access of concurrent requests', () => {
  it('judges each request of a concurrent mix by its own key, workspace and need', async () => {
    const reader = await addPerson(svc.admin, tenant, { permission: 'read' });
    const outsider = await addPerson(svc.admin, tenant);
    const wsKey = await svc.admin.keys.create.mutate({
      type: 'workspace',
      workspaceId: tenant.workspace.id,
      name: 'automation',
    });
    const missing = '00000000-0000-4000-8000-000000000000';
    // [request, expected status, error pattern]
    const cases: [() => ReturnType<typeof svc.call>, number, RegExp | null][] = [
      [() => listTables(tenant.key, tenant.workspace.id), 200, null],
      [() => listTables(other.key, other.workspace.id), 200, null],
      [() => listTables(reader.key, tenant.workspace.id), 200, null],
      [() => listTables(wsKey.key, tenant.workspace.id), 200, null],
      [() => listTables(tenant.key, other.workspace.id), 403, /access/],
      [() => listTables(other.key, tenant.workspace.id), 403, /access/],
      [() => listTables(outsider.key, tenant.workspace.id), 403, /access/],
      [() => listTables(wsKey.key, other.workspace.id), 403, /another workspace/],
      [() => listTables(tenant.key, missing), 404, /Workspace/],
      [() => listTables(tenant.key, 'not-a-uuid'), 400, null],
      [() => createTable(reader.key, tenant.workspace.id, 'r'), 403, /write permission/],
      [() => createTable(other.key, tenant.workspace.id, 'o'), 403, /access/],
    ];
    // Every case several times over, all at once, so batches mix them.
    const rounds = 4;
    const all = cases.flatMap((c) => Array.from({ length: rounds }, () => c));
    const answers = await Promise.all(all.map(([call]) => call()));
    for (const [i, res] of answers.entries()) {
      const [, status, error] = all[i] as (typeof cases)[number];
      expect(res.status, `case ${Math.floor(i / rounds)}: ${JSON.stringify(res.body)}`).toBe(status);
      if (error) expect(res.body.error).toMatch(error);
    }
    // Refused writes changed nothing: the tenant's workspace holds no table.
    expect((await listTables(tenant.key, tenant.workspace.id)).body.data.tables).toEqual([]);
  });

  it('sees a permission or an archive change on the very next requests', async () => {
    const person = await addPerson(svc.admin, tenant);
    expect((await listTables(person.key, tenant.workspace.id)).status).toBe(403);
    const grant = (permission: 'read' | 'write') =>
      svc.admin.workspaces.grant.mutate({
        workspaceId: tenant.workspace.id,
        userId: person.user.id,
        permission,
      });
    const writes = (tag: string) =>
      Promise.all(
        Array.from({ length: 6 }, (_, i) => createTable(person.key, tenant.workspace.id, `${tag}${i}`)),
      );
    await grant('read');
    expect((await writes('a')).map((r) => r.status)).toEqual(Array(6).fill(403));
    await grant('write');
    expect((await writes('b')).map((r) => r.status)).toEqual(Array(6).fill(200));
    await svc.admin.workspaces.archive.mutate({ workspaceId: tenant.workspace.id });
    const archived = await writes('c');
    expect(archived.map((r) => r.status)).toEqual(Array(6).fill(403));
    expect(archived[0]?.body.error).toMatch(/archived/);
    await svc.admin.workspaces.restore.mutate({ workspaceId: tenant.workspace.id });
    const tables = (await listTables(person.key, tenant.workspace.id)).body.data.tables as { name: string }[];
    expect(tables.map((t) => t.name).sort()).toEqual(['b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
  });
});
