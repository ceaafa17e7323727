// Inbound webhooks: each is a secret URL, POST /api/webhooks/{token}, that starts an execution of one
// workflow. The token (32 random bytes, base64url) is stored as its SHA-256 only and shown once, at
// creation or rotation; the optional signing secret is sealed with AES-256-GCM, since verifying a
// signature needs it back. Neither leaves this module through a listing.
import { createHash, randomBytes } from 'node:crypto';
import { notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { open, seal } from './secret-box.ts';

export type WebhookMode = 'async' | 'sync';

export const WEBHOOK_PATH = '/api/webhooks/';
/** Longer than any token we issue: such a path is unknown without asking the database. */
const MAX_TOKEN_LENGTH = 128;

export const generateWebhookToken = () => randomBytes(32).toString('base64url');
const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();
/** The path a webhook answers on: the API's public address goes in front of it. */
export const webhookPath = (token: string) => `${WEBHOOK_PATH}${token}`;

export interface WebhookInfo {
  id: string;
  workspaceId: string;
  workflowId: string;
  mode: WebhookMode;
  /** True when calls must be signed with the webhook's secret. */
  signed: boolean;
  /** The path with all but the token's last four characters hidden: enough to tell webhooks apart. */
  maskedUrl: string;
  createdAt: string;
  tokenRotatedAt: string | null;
}

/** The answer to a creation or rotation: the only time the token is shown. */
export interface WebhookWithToken extends WebhookInfo {
  token: string;
  /** The path to POST to (POST {public address}/api/webhooks/{token}). */
  url: string;
}

type WebhookRow = {
  id: string;
  workspace_id: string;
  workflow_id: string;
  mode: WebhookMode;
  token_last4: string;
  secret_ciphertext: Uint8Array | null;
  created_at: Date;
  token_rotated_at: Date | null;
};

const toInfo = (r: WebhookRow): WebhookInfo => ({
  id: r.id,
  workspaceId: r.workspace_id,
  workflowId: r.workflow_id,
  mode: r.mode,
  signed: r.secret_ciphertext !== null,
  maskedUrl: `${WEBHOOK_PATH}••••${r.token_last4}`,
  createdAt: r.created_at.toISOString(),
  tokenRotatedAt: r.token_rotated_at?.toISOString() ?? null,
});

const withToken = (r: WebhookRow, token: string): WebhookWithToken => ({
  ...toInfo(r),
  token,
  url: webhookPath(token),
});

export interface CreateWebhookInput {
  workflowId: string;
  /** When given, the workflow must be in this workspace (404 otherwise). */
  workspaceId?: string;
  secret?: string;
  mode?: WebhookMode;
}

export async function createWebhook(
  db: Queryable,
  encryptionKey: Buffer,
  actor: Actor,
  input: CreateWebhookInput,
): Promise<WebhookWithToken> {
  const token = generateWebhookToken();
  return db.transaction(async (tx) => {
    const [wf] = await tx.query<{ workspace_id: string; organization_id: string }>(
      `select w.workspace_id, s.organization_id from workflows w join workspaces s on s.id = w.workspace_id
        where w.id = $1`,
      [input.workflowId],
    );
    // Another workspace's workflow reads as missing: the caller learns nothing about it.
    if (!wf || (input.workspaceId !== undefined && wf.workspace_id !== input.workspaceId))
      throw notFound('Workflow');
    const [row] = await tx.query<WebhookRow>(
      `insert into webhooks (workspace_id, workflow_id, mode, token_hash, token_last4, secret_ciphertext)
       values ($1, $2, $3, $4, $5, $6) returning *`,
      [
        wf.workspace_id,
        input.workflowId,
        input.mode ?? 'async',
        hashToken(token),
        token.slice(-4),
        input.secret === undefined ? null : seal(encryptionKey, input.secret),
      ],
    );
    const hook = row as WebhookRow;
    await recordAudit(tx, actor, {
      organizationId: wf.organization_id,
      workspaceId: wf.workspace_id,
      action: 'webhook.created',
      resourceType: 'webhook',
      resourceId: hook.id,
      metadata: { workflowId: input.workflowId, mode: hook.mode, signed: input.secret !== undefined },
    });
    return withToken(hook, token);
  });
}

export async function listWebhooks(
  db: Queryable,
  filter: { workspaceId?: string; workflowId?: string },
): Promise<WebhookInfo[]> {
  const rows = await db.query<WebhookRow>(
    `select * from webhooks where ($1::uuid is null or workspace_id = $1) and ($2::uuid is null or workflow_id = $2)
      order by created_at, id`,
    [filter.workspaceId ?? null, filter.workflowId ?? null],
  );
  return rows.map(toInfo);
}

/** Deletes a webhook: its URL answers 404 from then on. */
export async function deleteWebhook(db: Queryable, actor: Actor, id: string): Promise<{ deleted: true }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<WebhookRow & { organization_id: string }>(
      `delete from webhooks h using workspaces s where h.id = $1 and s.id = h.workspace_id
       returning h.*, s.organization_id`,
      [id],
    );
    if (!row) throw notFound('Webhook');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'webhook.deleted',
      resourceType: 'webhook',
      resourceId: id,
      metadata: { workflowId: row.workflow_id },
    });
    return { deleted: true };
  });
}

/** Gives a webhook a new token: the old URL answers 404 at once; the new one is shown this once. */
export async function rotateWebhookToken(db: Queryable, actor: Actor, id: string): Promise<WebhookWithToken> {
  const token = generateWebhookToken();
  return db.transaction(async (tx) => {
    const [row] = await tx.query<WebhookRow & { organization_id: string }>(
      `update webhooks h set token_hash = $2, token_last4 = $3, token_rotated_at = now()
         from workspaces s where h.id = $1 and s.id = h.workspace_id returning h.*, s.organization_id`,
      [id, hashToken(token), token.slice(-4)],
    );
    if (!row) throw notFound('Webhook');
    await recordAudit(tx, actor, {
      organizationId: row.organization_id,
      workspaceId: row.workspace_id,
      action: 'webhook.token_rotated',
      resourceType: 'webhook',
      resourceId: id,
    });
    return withToken(row, token);
  });
}

/** What a call needs to know of the webhook its token names. */
export interface WebhookTarget {
  id: string;
  workspaceId: string;
  workflowId: string;
  mode: WebhookMode;
  /** The signing secret, sealed; null when calls need no signature. Open it with webhookSecret(). */
  sealedSecret: Uint8Array | null;
  /** An archived workspace runs nothing. */
  workspaceArchived: boolean;
}

/** The webhook a token names; null when none does (never issued, deleted or rotated away). */
export async function findWebhookByToken(db: Queryable, token: string): Promise<WebhookTarget | null> {
  if (!token || token.length > MAX_TOKEN_LENGTH) return null;
  const [row] = await db.query<WebhookRow & { archived: boolean }>(
    `select h.id, h.workspace_id, h.workflow_id, h.mode, h.secret_ciphertext, s.archived_at is not null as archived
       from webhooks h join workspaces s on s.id = h.workspace_id where h.token_hash = $1`,
    [hashToken(token)],
  );
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    workflowId: row.workflow_id,
    mode: row.mode,
    sealedSecret: row.secret_ciphertext,
    workspaceArchived: row.archived,
  };
}

/** The signing secret of a webhook, opened to verify one call. */
export const webhookSecret = (encryptionKey: Buffer, target: WebhookTarget): string | null =>
  target.sealedSecret === null ? null : open(encryptionKey, target.sealedSecret);
