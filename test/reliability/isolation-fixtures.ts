// The world the isolation suite probes: two organizations with two workspaces each, one of every
// resource in each workspace (named with a marker string unique to that workspace), and the keys of
// every kind a caller of organization A may hold. Built through the admin plane and the public API.
import { expect } from 'vitest';
import { upload } from '../api/files-helpers.ts';
import { settled, uploadDocument } from '../api/knowledge-helpers.ts';
import type { Tenant, TestService } from '../helpers/service.ts';
import { addPerson, createTenant, createWorkspace } from '../helpers/service.ts';
import { pollJob } from '../helpers/workflows.ts';

/** One workspace's resources: every id a request could name, and the marker in every name. */
export interface Place {
  label: string;
  orgId: string;
  workspaceId: string;
  marker: string;
  workflowId: string;
  executionId: string;
  /** The execution's log entry (GET /api/v1/logs/{id}). */
  logId: string;
  /** An audit entry recorded in the workspace (GET /api/v1/audit-logs/{id}). */
  auditLogId: string;
  tableId: string;
  rowId: string;
  fileId: string;
  folderId: string;
  /** A workflow folder (the workflow routes take folderId: a file folder is not one). */
  workflowFolderId: string;
  knowledgeBaseId: string;
  documentId: string;
  /** A chunk of the document (a small number: not among idsOf's leak checks). */
  chunkId: string;
  /** A tag defined on the knowledge base (the same name in every place). */
  tagName: string;
}

export interface KeyKind {
  name: string;
  /** undefined: no X-API-Key header at all. */
  key: string | undefined;
  /** Whether the key authenticates (revoked, missing and malformed keys do not). */
  valid: boolean;
}

const BIG = { requestsPerMinute: 1_000_000, maxBurst: 2_000_000 };

async function roomy(svc: TestService): Promise<Tenant> {
  const tenant = await createTenant(svc.admin, { plan: 'enterprise' });
  await svc.admin.quotas.set.mutate({ orgId: tenant.org.id, api: BIG, sync: BIG, async: BIG });
  return tenant;
}

function ok(res: { status: number; body: unknown }) {
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

/** The columns the OpenAPI examples of the table endpoints use, so those examples are valid bodies. */
const EXAMPLE_COLUMNS = [
  { name: 'email', type: 'string', required: true, unique: true },
  { name: 'visits', type: 'number' },
];

/** One of every resource in the workspace, named with `marker`. */
async function furnish(
  svc: TestService,
  key: string,
  orgId: string,
  workspaceId: string,
  label: string,
): Promise<Place> {
  const marker = `isomark${label}${Math.random().toString(36).slice(2, 8)}`;
  const wf = await svc.admin.workflows.create.mutate({
    workspaceId,
    name: `wf ${marker}`,
    description: `about ${marker}`,
    definition: {
      inputs: { name: { type: 'string' } },
      blocks: [{ id: 'r', type: 'response', data: { said: marker, name: '<start.name>' } }],
    },
  });
  await svc.admin.workflows.deploy.mutate({ id: wf.id });
  const started = await svc.call('POST', `/api/workflows/${wf.id}/execute`, {
    key,
    body: { inputs: { name: marker }, async: true },
  });
  ok(started);
  const executionId = (started.body.taskId ?? started.body.data?.taskId) as string;
  expect(executionId).toEqual(expect.any(String));
  await pollJob(svc.call, key, executionId);
  const logs = await svc.call('GET', '/api/v1/logs', { key, query: { workspaceId, executionId } });
  ok(logs);
  const logId = logs.body.data[0].id as string;

  const table = await svc.call('POST', '/api/v1/tables', {
    key,
    body: { workspaceId, name: `t_${marker}`, description: marker, schema: { columns: EXAMPLE_COLUMNS } },
  });
  ok(table);
  const tableId = table.body.data.table.id as string;
  const row = await svc.call('POST', `/api/v1/tables/${tableId}/rows`, {
    key,
    body: { workspaceId, data: { email: `${marker}@example.com`, visits: 1 } },
  });
  ok(row);
  const folder = await svc.admin.folders.create.mutate({ workspaceId, name: `folder ${marker}` });
  const workflowFolder = await svc.admin.folders.create.mutate({
    workspaceId,
    name: `flows ${marker}`,
    kind: 'workflow',
  });
  const file = await upload(svc, key, {
    workspaceId,
    name: `${marker}.txt`,
    content: Buffer.from(`secret of ${marker}`),
    type: 'text/plain',
  });
  ok(file);
  const kb = await svc.admin.knowledge.create.mutate({ workspaceId, name: `kb ${marker}` });
  const doc = await uploadDocument(svc, key, kb.id, {
    workspaceId,
    name: `${marker}-doc.txt`,
    content: `The ${marker} handbook says hello.`,
  });
  ok(doc);
  const documentId = doc.body.data.document.id as string;
  await settled(svc, documentId);
  const tagName = 'department';
  await svc.admin.knowledge.defineTag.mutate({ knowledgeBaseId: kb.id, name: tagName, type: 'text' });
  const [chunk] = await svc.db.query<{ id: string }>(
    'select id::text from knowledge_chunks where document_id = $1 order by chunk_index limit 1',
    [documentId],
  );
  // Read straight from the trail: the listing of it needs an enterprise admin's key in the workspace.
  const [audit] = await svc.db.query<{ id: string }>(
    'select id from audit_logs where workspace_id = $1 order by created_at, id limit 1',
    [workspaceId],
  );
  return {
    label,
    orgId,
    workspaceId,
    marker,
    workflowId: wf.id as string,
    executionId,
    logId,
    auditLogId: audit?.id as string,
    tableId,
    rowId: row.body.data.row.id as string,
    fileId: file.body.data.file.id as string,
    folderId: (folder as { id: string }).id,
    workflowFolderId: workflowFolder.id,
    knowledgeBaseId: kb.id as string,
    documentId,
    chunkId: chunk?.id as string,
    tagName,
  };
}

export interface World {
  orgA: Tenant;
  orgB: Tenant;
  /** A1: the callers' own workspace; A2: same organization, personal keys disallowed; B1, B2: another organization. */
  places: Record<'A1' | 'A2' | 'B1' | 'B2', Place>;
  keys: KeyKind[];
  /** Personal key of a member holding read permission on A1. */
  readKey: string;
  writeKey: string;
  workspaceKeyA1: string;
  /** Strings of organization B's people and organization (names, emails), never to be shown to A. */
  orgBSecrets: string[];
}

export async function buildWorld(svc: TestService): Promise<World> {
  const orgA = await roomy(svc);
  const orgB = await roomy(svc);
  const a2 = await createWorkspace(svc.admin, orgA);
  const b2 = await createWorkspace(svc.admin, orgB);
  const [A1, A2, B1, B2] = await Promise.all([
    furnish(svc, orgA.key, orgA.org.id, orgA.workspace.id, 'a1'),
    furnish(svc, orgA.key, orgA.org.id, a2, 'a2'),
    furnish(svc, orgB.key, orgB.org.id, orgB.workspace.id, 'b1'),
    furnish(svc, orgB.key, orgB.org.id, b2, 'b2'),
  ]);
  // A2 refuses personal keys: even its owner's key is refused there.
  await svc.admin.workspaces.update.mutate({ workspaceId: a2, allowPersonalApiKeys: false });

  const reader = await addPerson(svc.admin, orgA, { permission: 'read' });
  const writer = await addPerson(svc.admin, orgA, { permission: 'write' });
  const wsAdmin = await addPerson(svc.admin, orgA, { permission: 'admin' });
  const revoked = await addPerson(svc.admin, orgA, { permission: 'admin' });
  await svc.admin.keys.revoke.mutate({ id: revoked.keyId });
  const { key: workspaceKeyA1 } = await svc.admin.keys.create.mutate({
    type: 'workspace',
    workspaceId: orgA.workspace.id,
    name: 'automation',
  });
  const { key: revokedWorkspaceKey, id: revokedWsKeyId } = await svc.admin.keys.create.mutate({
    type: 'workspace',
    workspaceId: orgA.workspace.id,
    name: 'old automation',
  });
  await svc.admin.keys.revoke.mutate({ id: revokedWsKeyId });

  const keys: KeyKind[] = [
    { name: 'owner personal', key: orgA.key, valid: true },
    { name: 'read personal', key: reader.key, valid: true },
    { name: 'write personal', key: writer.key, valid: true },
    { name: 'admin personal', key: wsAdmin.key, valid: true },
    { name: 'workspace key', key: workspaceKeyA1, valid: true },
    { name: 'revoked personal', key: revoked.key, valid: false },
    { name: 'revoked workspace key', key: revokedWorkspaceKey, valid: false },
    { name: 'missing', key: undefined, valid: false },
    { name: 'empty', key: '', valid: false },
    { name: 'malformed', key: 'not-a-key', valid: false },
    { name: 'forged', key: `sk-service-${'A'.repeat(32)}`, valid: false },
    { name: 'truncated', key: orgA.key.slice(0, -1), valid: false },
  ];
  return {
    orgA,
    orgB,
    places: { A1, A2, B1, B2 },
    keys,
    readKey: reader.key,
    writeKey: writer.key,
    workspaceKeyA1,
    orgBSecrets: [orgB.org.slug, orgB.user.name, orgB.user.email, orgB.key],
  };
}

/** Every id of a place (the workspace's own included): what a leak check looks for. */
export function idsOf(p: Place): string[] {
  return [
    p.workspaceId,
    p.workflowId,
    p.executionId,
    p.logId,
    p.auditLogId,
    p.tableId,
    p.rowId,
    p.fileId,
    p.folderId,
    p.workflowFolderId,
    p.knowledgeBaseId,
    p.documentId,
  ];
}

/**
 * A digest of everything a refused request could have changed, straight from the database: every
 * row of the tables that hold tenants' resources (ingestion and executions have settled by now).
 */
export async function snapshot(svc: TestService): Promise<Record<string, string>> {
  const tables = [
    'workspaces',
    'workspace_permissions',
    'workflows',
    'workflow_versions',
    'executions',
    'user_tables',
    'table_rows',
    'files',
    'folders',
    'knowledge_bases',
    'knowledge_documents',
    'knowledge_chunks',
    'knowledge_tags',
    'webhooks',
  ];
  const out: Record<string, string> = {};
  for (const t of tables) {
    const [row] = await svc.db.query<{ n: string; h: string | null }>(
      `select count(*)::text as n, md5(string_agg(x::text, ',' order by x::text)) as h from ${t} x`,
    );
    out[t] = `${row?.n}:${row?.h}`;
  }
  return out;
}
