// The audit entries of a table's rows moving in or out in bulk: an import (in the import's own
// transaction, so an import that keeps nothing leaves no entry) and an export (once its stream has
// ended, since only then is it known how many rows left the service, and whether all of them did).
import { type Actor, recordAudit } from '../audit-logs.ts';
import type { Queryable } from '../client.ts';

/** Where the table is, as the audit entry files it. */
export interface AuditedTable {
  organizationId: string;
  workspaceId: string;
  id: string;
  name: string;
}

export async function recordImport(
  tx: Queryable,
  actor: Actor,
  table: AuditedTable,
  what: { fileName: string; mode: string; insertedCount: number; skippedCount: number },
): Promise<void> {
  await recordAudit(tx, actor, {
    organizationId: table.organizationId,
    workspaceId: table.workspaceId,
    action: 'table.rows_imported',
    resourceType: 'table',
    resourceId: table.id,
    metadata: { name: table.name, ...what },
  });
}

/**
 * `complete` is false when the stream stopped before its last row (the client went away, or a page
 * could not be read): `rowCount` is then the rows written out until it stopped.
 */
export async function recordExport(
  db: Queryable,
  actor: Actor,
  table: AuditedTable,
  what: { format: string; filter: unknown; rowCount: number; complete: boolean },
): Promise<void> {
  await recordAudit(db, actor, {
    organizationId: table.organizationId,
    workspaceId: table.workspaceId,
    action: 'table.rows_exported',
    resourceType: 'table',
    resourceId: table.id,
    metadata: { name: table.name, ...what, filter: what.filter ?? null },
  });
}
