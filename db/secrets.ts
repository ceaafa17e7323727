// Workspace secrets, used in workflows as `{{NAME}}`: sealed with AES-256-GCM at rest; their values
// leave this module only into a running execution, never through a listing.
import { notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { open, seal } from './secret-box.ts';
import { findWorkspace } from './workspaces.ts';

export async function setSecret(
  db: Queryable,
  encryptionKey: Buffer,
  actor: Actor,
  input: { workspaceId: string; name: string; value: string },
) {
  return db.transaction(async (tx) => {
    const ws = await findWorkspace(tx, input.workspaceId);
    if (!ws) throw notFound('Workspace');
    await tx.query(
      `insert into workspace_secrets (workspace_id, name, value_ciphertext) values ($1, $2, $3)
       on conflict (workspace_id, name) do update set value_ciphertext = excluded.value_ciphertext, updated_at = now()`,
      [input.workspaceId, input.name, seal(encryptionKey, input.value)],
    );
    await recordAudit(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId: ws.id,
      action: 'secret.set',
      resourceType: 'secret',
      resourceId: input.name,
    });
    return { workspaceId: input.workspaceId, name: input.name };
  });
}

export async function listSecretNames(db: Queryable, workspaceId: string) {
  const rows = await db.query<{ name: string; created_at: Date; updated_at: Date }>(
    'select name, created_at, updated_at from workspace_secrets where workspace_id = $1 order by name',
    [workspaceId],
  );
  return rows.map((r) => ({
    name: r.name,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
}

export async function deleteSecret(
  db: Queryable,
  actor: Actor,
  input: { workspaceId: string; name: string },
) {
  return db.transaction(async (tx) => {
    const ws = await findWorkspace(tx, input.workspaceId);
    if (!ws) throw notFound('Workspace');
    const deleted = await tx.query(
      'delete from workspace_secrets where workspace_id = $1 and name = $2 returning name',
      [input.workspaceId, input.name],
    );
    if (!deleted.length) throw notFound('Secret');
    await recordAudit(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId: ws.id,
      action: 'secret.deleted',
      resourceType: 'secret',
      resourceId: input.name,
    });
    return { deleted: true };
  });
}

/** Every secret of a workspace, opened: for an execution about to run. */
export async function loadSecrets(
  db: Queryable,
  encryptionKey: Buffer,
  workspaceId: string,
): Promise<Map<string, string>> {
  const rows = await db.query<{ name: string; value_ciphertext: Uint8Array }>(
    'select name, value_ciphertext from workspace_secrets where workspace_id = $1',
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.name, open(encryptionKey, r.value_ciphertext)]));
}
