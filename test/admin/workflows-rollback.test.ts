// workflows.rollback: deploys an earlier immutable version again. The deployed pointer moves to it,
// so runs (manual and through the public API) execute it; no version is made and the draft stays;
// each rollback is audited as workflow.rolled_back. An unknown version or workflow is refused and
// changes nothing. Also what the console reads around it: versions (number, createdAt, definition,
// which one is deployed) and list (deployedVersion).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminError,
  createTenant,
  startTestService,
  type Tenant,
  type TestService,
} from '../helpers/service.ts';

let svc: TestService;
let tenant: Tenant;

beforeAll(async () => {
  svc = await startTestService({}, { runner: true });
  tenant = await createTenant(svc.admin);
});
afterAll(() => svc.close());

const answering = (v: number) => ({ blocks: [{ id: 'r', type: 'response', data: { v } }] });
// As stored: the parsed definition, with its defaults filled in.
const stored = (v: number) => ({ inputs: {}, edges: [], ...answering(v) });

/** A workflow deployed as versions 1..n, version i answering {v: i}; the draft answers {v: n}. */
async function withVersions(n: number) {
  const wf = await svc.admin.workflows.create.mutate({
    workspaceId: tenant.workspace.id,
    name: 'versions',
    definition: answering(1),
  });
  for (let v = 1; v <= n; v++) {
    if (v > 1) await svc.admin.workflows.update.mutate({ id: wf.id, definition: answering(v) });
    expect((await svc.admin.workflows.deploy.mutate({ id: wf.id })).version).toBe(v);
  }
  return wf.id;
}

/** Runs the workflow by hand and answers the finished execution. */
async function runOnce(workflowId: string) {
  const { executionId } = await svc.admin.executions.run.mutate({ workflowId });
  for (let i = 0; i < 800; i++) {
    const e = await svc.admin.executions.get.query({ id: executionId });
    if (e.status === 'completed' || e.status === 'failed') return e;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${executionId} did not finish`);
}

/** The workflow's audit entries, runs left out. */
const auditOf = (workflowId: string) =>
  svc.db.query<{ action: string; metadata: Record<string, unknown> }>(
    `select action, metadata from audit_logs where resource_id = $1 and action like 'workflow.%'
        and action <> 'workflow.execute' order by created_at, id`,
    [workflowId],
  );

describe('workflows.rollback', () => {
  it('moves the deployed pointer to an earlier version: runs execute it, the draft stays, it is audited', async () => {
    const id = await withVersions(2);
    expect((await runOnce(id)).output).toEqual({ v: 2 });

    const rolled = await svc.admin.workflows.rollback.mutate({ id, version: 1 });
    expect(rolled).toEqual({ version: 1, deployedAt: expect.any(String), previousVersion: 2 });

    const wf = await svc.admin.workflows.get.query({ id });
    expect(wf).toMatchObject({ deployedVersion: 1, deployedAt: rolled.deployedAt });
    expect(wf.definition).toEqual(stored(2));
    const listed = await svc.admin.workflows.list.query({ workspaceId: tenant.workspace.id });
    expect(listed.find((w) => w.id === id)).toMatchObject({ id, name: 'versions', deployedVersion: 1 });

    const run = await runOnce(id);
    expect(run).toMatchObject({ status: 'completed', version: 1, output: { v: 1 } });
    // The public API runs it too (its process had read version 2 before).
    const viaApi = await svc.call('POST', `/api/workflows/${id}/execute`, { key: tenant.key, body: {} });
    expect(viaApi.status).toBe(200);
    expect(viaApi.body.output).toEqual({ v: 1 });

    // No version was made: the versions stay 1 and 2, and version 1 is marked deployed.
    const versions = await svc.admin.workflows.versions.query({ id });
    expect(versions).toEqual([
      {
        version: 1,
        definition: stored(1),
        deployedBy: null,
        deployedAt: expect.any(String),
        createdAt: expect.any(String),
        deployed: true,
      },
      {
        version: 2,
        definition: stored(2),
        deployedBy: null,
        deployedAt: expect.any(String),
        createdAt: expect.any(String),
        deployed: false,
      },
    ]);
    expect(Date.parse(versions[0]?.createdAt as string)).toBeLessThanOrEqual(
      Date.parse(versions[1]?.createdAt as string),
    );

    // A later deployment snapshots the draft as the next number, after the ones that exist.
    expect((await svc.admin.workflows.deploy.mutate({ id })).version).toBe(3);
    expect((await runOnce(id)).output).toEqual({ v: 2 });
    // And any version may be deployed again, later ones too.
    expect(await svc.admin.workflows.rollback.mutate({ id, version: 2 })).toMatchObject({
      version: 2,
      previousVersion: 3,
    });
    expect((await svc.admin.workflows.versions.query({ id })).map((v) => v.deployed)).toEqual([
      false,
      true,
      false,
    ]);

    expect(await auditOf(id)).toEqual([
      { action: 'workflow.created', metadata: { name: 'versions' } },
      { action: 'workflow.deployed', metadata: { version: 1 } },
      { action: 'workflow.updated', metadata: { fields: ['definition'] } },
      { action: 'workflow.deployed', metadata: { version: 2 } },
      { action: 'workflow.rolled_back', metadata: { version: 1, previousVersion: 2 } },
      { action: 'workflow.deployed', metadata: { version: 3 } },
      { action: 'workflow.rolled_back', metadata: { version: 2, previousVersion: 3 } },
    ]);
  });

  it('deploys a version of an undeployed workflow again', async () => {
    const id = await withVersions(2);
    await svc.admin.workflows.undeploy.mutate({ id });
    expect(await svc.admin.workflows.rollback.mutate({ id, version: 1 })).toMatchObject({
      version: 1,
      previousVersion: null,
    });
    expect((await runOnce(id)).output).toEqual({ v: 1 });
  });

  it('refuses an unknown version or workflow, and a malformed request, changing nothing', async () => {
    const id = await withVersions(2);
    const before = await svc.admin.workflows.get.query({ id });
    const audit = await auditOf(id);

    expect(await adminError(svc.admin.workflows.rollback.mutate({ id, version: 3 }))).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 404,
      message: 'Version 3 of this workflow not found',
    });
    expect(
      await adminError(svc.admin.workflows.rollback.mutate({ id: crypto.randomUUID(), version: 1 })),
    ).toMatchObject({ code: 'NOT_FOUND', message: 'Workflow not found' });
    // A draft never deployed has no version to go back to.
    const draft = await svc.admin.workflows.create.mutate({
      workspaceId: tenant.workspace.id,
      name: 'draft',
      definition: answering(1),
    });
    expect(await adminError(svc.admin.workflows.rollback.mutate({ id: draft.id, version: 1 }))).toMatchObject(
      { code: 'NOT_FOUND' },
    );
    expect((await svc.admin.workflows.get.query({ id: draft.id })).deployedVersion).toBeNull();

    for (const input of [
      { id, version: 0 },
      { id, version: -1 },
      { id, version: 1.5 },
      { id, version: '1' },
      { id },
      { id: 'x', version: 1 },
    ]) {
      const err = await adminError(
        svc.admin.workflows.rollback.mutate(
          input as Parameters<typeof svc.admin.workflows.rollback.mutate>[0],
        ),
      );
      expect(err, JSON.stringify(input)).toMatchObject({ code: 'BAD_REQUEST' });
      expect(err.details?.length, JSON.stringify(input)).toBeGreaterThan(0);
    }
    expect(await svc.admin.workflows.get.query({ id })).toEqual(before);
    expect(await auditOf(id)).toEqual(audit);
    expect((await runOnce(id)).output).toEqual({ v: 2 });
  });

  it('orders racing rollbacks and deployments: the pointer ends on one of them, versions stay gapless', async () => {
    const id = await withVersions(2);
    const results = await Promise.all([
      svc.admin.workflows.rollback.mutate({ id, version: 1 }),
      svc.admin.workflows.deploy.mutate({ id }),
      svc.admin.workflows.rollback.mutate({ id, version: 2 }),
      svc.admin.workflows.deploy.mutate({ id }),
    ]);
    expect(results.map((r) => r.version).toSorted()).toEqual([1, 2, 3, 4]);
    const versions = await svc.admin.workflows.versions.query({ id });
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
    expect(versions.filter((v) => v.deployed)).toHaveLength(1);
    expect([1, 2, 3, 4]).toContain((await svc.admin.workflows.get.query({ id })).deployedVersion);
    expect((await auditOf(id)).filter((a) => a.action === 'workflow.rolled_back')).toHaveLength(2);
  });
});
