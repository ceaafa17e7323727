// Completion callbacks' records: each workspace's signing secret (sealed with AES-256-GCM at rest,
// made on first use, replaced by rotation) and the delivery attempts of each execution's callback,
// which also settle the execution's callback status (delivered, given up).
import { randomBytes } from 'node:crypto';
import { notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { open, seal } from './secret-box.ts';
import { findWorkspace } from './workspaces.ts';

// A prefix says what the value is when it turns up in a receiver's configuration.
const SECRET_PREFIX = 'cbsec_';

function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export interface CallbackSecret {
  workspaceId: string;
  /** The HMAC-SHA256 key, used as its UTF-8 bytes, prefix included. */
  secret: string;
  createdAt: string;
  rotatedAt: string | null;
}

interface SecretRow {
  workspace_id: string;
  secret_ciphertext: Uint8Array;
  created_at: Date;
  rotated_at: Date | null;
}

function secretOf(key: Buffer, row: SecretRow): CallbackSecret {
  return {
    workspaceId: row.workspace_id,
    secret: open(key, row.secret_ciphertext),
    createdAt: row.created_at.toISOString(),
    rotatedAt: row.rotated_at?.toISOString() ?? null,
  };
}

/** A workspace's callback signing secret, made now if it has none yet; 404 for an unknown workspace. */
export async function callbackSecret(
  db: Queryable,
  encryptionKey: Buffer,
  workspaceId: string,
): Promise<CallbackSecret> {
  // Two racing first uses: one insert wins; the loser's statement, whose snapshot predates the
  // winner's commit, sees no row, and the second pass reads the winner's.
  for (let pass = 0; pass < 2; pass++) {
    const [row] = await db.query<SecretRow>(
      `with made as (
         insert into workspace_callback_secrets (workspace_id, secret_ciphertext)
         select id, $2 from workspaces where id = $1
         on conflict (workspace_id) do nothing
         returning workspace_id, secret_ciphertext, created_at, rotated_at)
       select * from made
       union all
       select workspace_id, secret_ciphertext, created_at, rotated_at from workspace_callback_secrets
        where workspace_id = $1 and not exists (select 1 from made)`,
      [workspaceId, seal(encryptionKey, newSecret())],
    );
    if (row) return secretOf(encryptionKey, row);
    if (!(await findWorkspace(db, workspaceId))) break;
  }
  throw notFound('Workspace');
}

/**
 * Replaces a workspace's callback secret: every delivery attempt from now on, retries of earlier
 * callbacks included, is signed with the new one.
 */
export async function rotateCallbackSecret(
  db: Queryable,
  encryptionKey: Buffer,
  actor: Actor,
  workspaceId: string,
): Promise<CallbackSecret> {
  return db.transaction(async (tx) => {
    const ws = await findWorkspace(tx, workspaceId);
    if (!ws) throw notFound('Workspace');
    const [row] = await tx.query<SecretRow>(
      `insert into workspace_callback_secrets (workspace_id, secret_ciphertext) values ($1, $2)
       on conflict (workspace_id) do update
         set secret_ciphertext = excluded.secret_ciphertext, rotated_at = now()
       returning workspace_id, secret_ciphertext, created_at, rotated_at`,
      [workspaceId, seal(encryptionKey, newSecret())],
    );
    await recordAudit(tx, actor, {
      organizationId: ws.organization_id,
      workspaceId,
      action: 'callback_secret.rotated',
      resourceType: 'workspace',
      resourceId: workspaceId,
    });
    return secretOf(encryptionKey, row as SecretRow);
  });
}

export interface DeliveryAttempt {
  executionId: string;
  /** 1 for the first attempt; pg-boss's retry count + 1 after. */
  attempt: number;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  delivered: boolean;
  /** A failed attempt after which no retry is left. */
  gaveUp: boolean;
}

/** Records one attempt and, when it settles the callback (delivered or given up), the execution's status. */
export async function recordDeliveryAttempt(db: Queryable, a: DeliveryAttempt): Promise<void> {
  await db.query(
    `with attempt as (
       insert into callback_deliveries (execution_id, attempt, url, status_code, error, duration_ms, delivered, gave_up)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning execution_id)
     update executions e set callback_status = case when $7::boolean then 'delivered' else 'given_up' end
       from attempt where e.id = attempt.execution_id and ($7::boolean or $8::boolean)`,
    [a.executionId, a.attempt, a.url, a.statusCode, a.error, a.durationMs, a.delivered, a.gaveUp],
  );
}

export interface CallbackDeliveries {
  executionId: string;
  workspaceId: string;
  callbackUrl: string | null;
  /** pending until delivered or given up; null: the execution has no callback. */
  status: 'pending' | 'delivered' | 'given_up' | null;
  attempts: {
    attempt: number;
    url: string;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
    delivered: boolean;
    gaveUp: boolean;
    attemptedAt: string;
  }[];
}

/** An execution's callback and its delivery attempts, oldest first; 404 for an unknown execution. */
export async function listDeliveries(db: Queryable, executionId: string): Promise<CallbackDeliveries> {
  const [execution] = await db.query<{
    workspace_id: string;
    callback_url: string | null;
    callback_status: CallbackDeliveries['status'];
  }>('select workspace_id, callback_url, callback_status from executions where id = $1', [executionId]);
  if (!execution) throw notFound('Execution');
  const rows = await db.query<{
    attempt: number;
    url: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    delivered: boolean;
    gave_up: boolean;
    attempted_at: Date;
  }>(
    `select attempt, url, status_code, error, duration_ms, delivered, gave_up, attempted_at
       from callback_deliveries where execution_id = $1 order by attempted_at, attempt`,
    [executionId],
  );
  return {
    executionId,
    workspaceId: execution.workspace_id,
    callbackUrl: execution.callback_url,
    status: execution.callback_status,
    attempts: rows.map((r) => ({
      attempt: r.attempt,
      url: r.url,
      statusCode: r.status_code,
      error: r.error,
      durationMs: r.duration_ms,
      delivered: r.delivered,
      gaveUp: r.gave_up,
      attemptedAt: r.attempted_at.toISOString(),
    })),
  };
}
