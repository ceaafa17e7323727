// First start on an empty database: organization `default`, user admin@localhost, workspace
// `Default` and a personal key, plus the admin token when none is configured. Several processes may
// start at once against one server: an advisory lock makes exactly one of them do it.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createApiKey } from './api-keys.ts';
import { ADMIN_ACTOR } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import { addMember } from './members.ts';
import { createOrganization } from './organizations.ts';
import { createUser } from './users.ts';
import { createWorkspace } from './workspaces.ts';

const BOOTSTRAP_LOCK_KEY = 7_310_412_002;
const ADMIN_TOKEN_SETTING = 'admin_token_sha256';

export interface BootstrapResult {
  /** Set only on the start that created it: the one time it can be shown. */
  apiKey?: string;
  workspaceId?: string;
  /** Set only when it was generated now (ADMIN_TOKEN unset and none stored before). */
  adminToken?: string;
}

export async function bootstrap(
  db: Queryable,
  options: { encryptionKey: Buffer; bootstrapApiKey?: string; adminToken?: string },
): Promise<BootstrapResult> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    const result: BootstrapResult = {};
    if (!options.adminToken) {
      const [stored] = await tx.query('select 1 from service_settings where name = $1', [
        ADMIN_TOKEN_SETTING,
      ]);
      if (!stored) {
        result.adminToken = randomBytes(32).toString('base64url');
        await tx.query('insert into service_settings (name, value) values ($1, $2)', [
          ADMIN_TOKEN_SETTING,
          sha256(result.adminToken),
        ]);
      }
    }
    const [anyOrg] = await tx.query('select 1 from organizations limit 1');
    if (anyOrg) return result;
    const org = await createOrganization(tx, { name: 'default', slug: 'default' });
    const user = await createUser(tx, { name: 'Admin', email: 'admin@localhost' });
    await addMember(tx, ADMIN_ACTOR, { organizationId: org.id, userId: user.id, role: 'owner' });
    const ws = await createWorkspace(tx, ADMIN_ACTOR, {
      organizationId: org.id,
      ownerId: user.id,
      name: 'Default',
    });
    const key = await createApiKey(
      tx,
      options.encryptionKey,
      ADMIN_ACTOR,
      { type: 'personal', userId: user.id, name: 'bootstrap' },
      options.bootstrapApiKey,
    );
    return { ...result, apiKey: key.key, workspaceId: ws.id };
  });
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * Checks a presented admin token: against ADMIN_TOKEN when configured, else against the hash of
 * the token generated at first start (the plain token is never stored).
 */
export async function verifyAdminToken(db: Queryable, configured: string | undefined, presented: string) {
  let expected: string | undefined;
  if (configured) expected = sha256(configured);
  else {
    const [row] = await db.query<{ value: string }>('select value from service_settings where name = $1', [
      ADMIN_TOKEN_SETTING,
    ]);
    expected = row?.value;
  }
  if (!expected) return false;
  return timingSafeEqual(Buffer.from(sha256(presented), 'hex'), Buffer.from(expected, 'hex'));
}
