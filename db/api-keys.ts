// API keys: `sk-service-` + 24 random bytes base64url. Stored as SHA-256 (looked up on every
// request) and AES-256-GCM ciphertext; the plain key is returned once, at creation, and never logged.
import { createHash, randomBytes } from 'node:crypto';
import { conflict, isUniqueViolation, notFound } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import type { Scope } from './key-scopes.ts';
import type { PlanName, QuotaOverrides } from './plans.ts';
import { seal } from './secret-box.ts';
import { findWorkspace } from './workspaces.ts';

export const KEY_PREFIX = 'sk-service-';
export type KeyType = 'personal' | 'workspace';

export const generateApiKey = () => KEY_PREFIX + randomBytes(24).toString('base64url');
export const hashApiKey = (key: string) => createHash('sha256').update(key, 'utf8').digest();

export interface ApiKeyInfo {
  id: string;
  type: KeyType;
  name: string;
  userId: string | null;
  workspaceId: string | null;
  /** The key with all but its last four characters hidden. */
  maskedKey: string;
  /** The scopes the key is limited to (db/key-scopes.ts); empty: its full reach. */
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

type KeyRow = {
  id: string;
  type: KeyType;
  name: string;
  user_id: string | null;
  workspace_id: string | null;
  key_last4: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const toInfo = (r: KeyRow): ApiKeyInfo => ({
  id: r.id,
  type: r.type,
  name: r.name,
  userId: r.user_id,
  workspaceId: r.workspace_id,
  maskedKey: `${KEY_PREFIX}••••${r.key_last4}`,
  scopes: r.scopes,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

export type CreateKeyInput = (
  | { type: 'personal'; userId: string; name: string }
  | { type: 'workspace'; workspaceId: string; name: string }
) & { scopes?: readonly Scope[] };

/**
 * Creates a key (a given `key` is used as is: the bootstrap key known in advance). Personal keys
 * belong to a user; workspace keys to one workspace. Returns the plain key: the only time it is shown.
 */
export async function createApiKey(
  db: Queryable,
  encryptionKey: Buffer,
  actor: Actor,
  input: CreateKeyInput,
  key: string = generateApiKey(),
): Promise<ApiKeyInfo & { key: string }> {
  try {
    return await db.transaction(async (tx) => {
      const scope = await keyScope(tx, input);
      const [row] = await tx.query<KeyRow>(
        `insert into api_keys (type, user_id, workspace_id, name, key_hash, key_ciphertext, key_last4, scopes)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
        [
          input.type,
          input.type === 'personal' ? input.userId : null,
          input.type === 'workspace' ? input.workspaceId : null,
          input.name,
          hashApiKey(key),
          seal(encryptionKey, key),
          key.slice(-4),
          [...new Set(input.scopes ?? [])],
        ],
      );
      const info = toInfo(row as KeyRow);
      for (const organizationId of scope.organizationIds) {
        await recordAudit(tx, actor, {
          organizationId,
          workspaceId: scope.workspaceId,
          action: 'api_key.created',
          resourceType: 'api_key',
          resourceId: info.id,
          // Scopes only when limited: an unlimited key's entry reads as it always did.
          metadata: {
            type: info.type,
            name: info.name,
            userId: info.userId,
            ...(info.scopes.length ? { scopes: info.scopes } : {}),
          },
        });
      }
      return { ...info, key };
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('That key value is already in use');
    throw err;
  }
}

// The organizations whose audit log records a key's life: the workspace's, or each of the user's.
async function keyScope(tx: Queryable, input: CreateKeyInput) {
  if (input.type === 'workspace') {
    const ws = await findWorkspace(tx, input.workspaceId);
    if (!ws) throw notFound('Workspace');
    return { organizationIds: [ws.organization_id], workspaceId: ws.id };
  }
  const [user] = await tx.query('select id from users where id = $1', [input.userId]);
  if (!user) throw notFound('User');
  const orgs = await tx.query<{ organization_id: string }>(
    'select organization_id from members where user_id = $1 and departed_at is null',
    [input.userId],
  );
  return { organizationIds: orgs.map((o) => o.organization_id), workspaceId: null };
}

export async function listApiKeys(db: Queryable, filter: { userId?: string; workspaceId?: string }) {
  const rows = await db.query<KeyRow>(
    `select * from api_keys where ($1::uuid is null or user_id = $1) and ($2::uuid is null or workspace_id = $2)
      order by created_at, id`,
    [filter.userId ?? null, filter.workspaceId ?? null],
  );
  return rows.map(toInfo);
}

export async function revokeApiKey(db: Queryable, actor: Actor, keyId: string): Promise<ApiKeyInfo> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<KeyRow>(
      'update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning *',
      [keyId],
    );
    if (!row) throw notFound('API key');
    const scope = await keyScope(
      tx,
      row.type === 'workspace'
        ? { type: 'workspace', workspaceId: row.workspace_id as string, name: row.name }
        : { type: 'personal', userId: row.user_id as string, name: row.name },
    );
    for (const organizationId of scope.organizationIds) {
      await recordAudit(tx, actor, {
        organizationId,
        workspaceId: scope.workspaceId,
        action: 'api_key.revoked',
        resourceType: 'api_key',
        resourceId: row.id,
      });
    }
    return toInfo(row);
  });
}

/**
 * The plan a key is billed under outside any one workspace (its /api/v1 rate limit, its usage
 * figures): a workspace key's workspace's organization; for a personal key, the best plan among
 * its user's organizations (null organization: the user belongs to none).
 */
export interface KeyBilling {
  organizationId: string | null;
  plan: PlanName;
  overrides: QuotaOverrides | null;
}

/** The caller a key stands for, as resolved on each request. */
export type Principal = (
  | { keyId: string; type: 'personal'; userId: string; userName: string; userEmail: string }
  | { keyId: string; type: 'workspace'; workspaceId: string; organizationId: string; billedUserId: string }
) & {
  billing: KeyBilling;
  /** The scopes the key is limited to; empty: its full reach. */
  scopes: string[];
};

type KeyLookupRow = {
  hash: string;
  id: string;
  type: KeyType;
  scopes: string[];
  user_id: string | null;
  user_name: string | null;
  user_email: string | null;
  workspace_id: string | null;
  organization_id: string | null;
  billed_user_id: string | null;
  last_used_at: Date | null;
  billing_organization_id: string | null;
  billing_plan: PlanName | null;
  billing_overrides: QuotaOverrides | null;
};

/**
 * Resolves presented keys to their principals (null for unknown or revoked ones), in one query for
 * however many requests arrived together.
 */
export async function authenticateApiKeys(db: Queryable, presented: string[]): Promise<(Principal | null)[]> {
  const hashes = presented.map((key) =>
    key.startsWith(KEY_PREFIX) && key.length <= 200 ? hashApiKey(key).toString('hex') : null,
  );
  const wanted = hashes.filter((h): h is string => h !== null);
  if (!wanted.length) return presented.map(() => null);
  const rows = await db.query<KeyLookupRow>(
    `select encode(k.key_hash, 'hex') as hash, k.id, k.type, k.scopes, k.user_id, u.name as user_name, u.email as user_email,
            k.workspace_id, w.organization_id, w.billed_account_user_id as billed_user_id, k.last_used_at,
            b.id as billing_organization_id, b.plan as billing_plan, q.overrides as billing_overrides
       from api_keys k left join users u on u.id = k.user_id left join workspaces w on w.id = k.workspace_id
       left join lateral (
         select o.id, o.plan, o.created_at, array_position(array['enterprise', 'team', 'pro', 'free'], o.plan) as rank
           from organizations o where o.id = w.organization_id
         union all
         select o.id, o.plan, o.created_at, array_position(array['enterprise', 'team', 'pro', 'free'], o.plan)
           from members m join organizations o on o.id = m.organization_id
          where m.user_id = k.user_id and m.departed_at is null
         order by rank, created_at, id
         limit 1) b on true
       left join quota_overrides q on q.organization_id = b.id
      where k.key_hash = any(select decode(h, 'hex') from unnest($1::text[]) as h) and k.revoked_at is null`,
    [wanted],
  );
  const byHash = new Map(rows.map((r) => [r.hash, r]));
  // Record use at most once a minute: a write per request would make every read a write.
  const stale = rows
    .filter((r) => !r.last_used_at || Date.now() - r.last_used_at.getTime() > 60_000)
    .map((r) => r.id);
  if (stale.length)
    await db.query('update api_keys set last_used_at = now() where id = any($1::uuid[])', [stale]);
  return hashes.map((h) => {
    const row = h === null ? undefined : byHash.get(h);
    return row ? principalOf(row) : null;
  });
}

function principalOf(row: KeyLookupRow): Principal {
  const billing: KeyBilling = {
    organizationId: row.billing_organization_id,
    plan: row.billing_plan ?? 'free',
    overrides: row.billing_overrides,
  };
  if (row.type === 'personal') {
    return {
      billing,
      scopes: row.scopes,
      keyId: row.id,
      type: 'personal',
      userId: row.user_id as string,
      userName: row.user_name as string,
      userEmail: row.user_email as string,
    };
  }
  return {
    billing,
    scopes: row.scopes,
    keyId: row.id,
    type: 'workspace',
    workspaceId: row.workspace_id as string,
    organizationId: row.organization_id as string,
    billedUserId: row.billed_user_id as string,
  };
}
