// Organization membership: roles, departures (kept, so audit history can tell former members),
// and the rule that an organization always keeps an owner.
import { conflict, notFound, ServiceError } from '../errors.ts';
import { type Actor, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';

export const MEMBER_ROLES = ['owner', 'admin', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface Member {
  id: string;
  organizationId: string;
  userId: string;
  role: MemberRole;
  joinedAt: string;
  departedAt: string | null;
}

type MemberRow = {
  id: string;
  organization_id: string;
  user_id: string;
  role: MemberRole;
  joined_at: Date;
  departed_at: Date | null;
};

const toMember = (r: MemberRow): Member => ({
  id: r.id,
  organizationId: r.organization_id,
  userId: r.user_id,
  role: r.role,
  joinedAt: r.joined_at.toISOString(),
  departedAt: r.departed_at?.toISOString() ?? null,
});

/** Adds a user to an organization, or brings a former member back with the given role. */
export async function addMember(
  db: Queryable,
  actor: Actor,
  input: { organizationId: string; userId: string; role: MemberRole },
): Promise<Member> {
  return db.transaction(async (tx) => {
    await requireOrgAndUser(tx, input.organizationId, input.userId);
    const [existing] = await tx.query<MemberRow>(
      'select * from members where organization_id = $1 and user_id = $2 for update',
      [input.organizationId, input.userId],
    );
    if (existing && !existing.departed_at)
      throw conflict('The user is already a member of this organization');
    const [row] = await tx.query<MemberRow>(
      `insert into members (organization_id, user_id, role) values ($1, $2, $3)
       on conflict (organization_id, user_id)
       do update set role = excluded.role, joined_at = now(), departed_at = null returning *`,
      [input.organizationId, input.userId, input.role],
    );
    await recordAudit(tx, actor, {
      organizationId: input.organizationId,
      action: 'member.invited',
      resourceType: 'member',
      resourceId: input.userId,
      metadata: { role: input.role },
    });
    return toMember(row as MemberRow);
  });
}

/** Marks a member as departed and withdraws their permissions on the organization's workspaces. */
export async function removeMember(
  db: Queryable,
  actor: Actor,
  input: { organizationId: string; userId: string },
) {
  return db.transaction(async (tx) => {
    const member = await lockActiveMember(tx, input.organizationId, input.userId);
    if (member.role === 'owner') await requireAnotherOwner(tx, input.organizationId, input.userId);
    const [row] = await tx.query<MemberRow>(
      'update members set departed_at = now() where id = $1 returning *',
      [member.id],
    );
    await tx.query(
      `delete from workspace_permissions p using workspaces w
        where p.workspace_id = w.id and w.organization_id = $1 and p.user_id = $2`,
      [input.organizationId, input.userId],
    );
    await recordAudit(tx, actor, {
      organizationId: input.organizationId,
      action: 'member.removed',
      resourceType: 'member',
      resourceId: input.userId,
    });
    return toMember(row as MemberRow);
  });
}

export async function setMemberRole(
  db: Queryable,
  actor: Actor,
  input: { organizationId: string; userId: string; role: MemberRole },
): Promise<Member> {
  return db.transaction(async (tx) => {
    const member = await lockActiveMember(tx, input.organizationId, input.userId);
    if (member.role === 'owner' && input.role !== 'owner')
      await requireAnotherOwner(tx, input.organizationId, input.userId);
    const [row] = await tx.query<MemberRow>('update members set role = $2 where id = $1 returning *', [
      member.id,
      input.role,
    ]);
    await recordAudit(tx, actor, {
      organizationId: input.organizationId,
      action: 'member.role_changed',
      resourceType: 'member',
      resourceId: input.userId,
      metadata: { from: member.role, to: input.role },
    });
    return toMember(row as MemberRow);
  });
}

export async function listMembers(db: Queryable, organizationId: string): Promise<Member[]> {
  const rows = await db.query<MemberRow>(
    'select * from members where organization_id = $1 order by joined_at, id',
    [organizationId],
  );
  return rows.map(toMember);
}

/** A user's membership in an organization, current or former, or null if they never joined. */
export async function findMembership(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    'select * from members where organization_id = $1 and user_id = $2',
    [organizationId, userId],
  );
  return row ? toMember(row) : null;
}

/** The active membership of a user in an organization, or null. */
export async function activeMembership(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<Member | null> {
  const [row] = await db.query<MemberRow>(
    'select * from members where organization_id = $1 and user_id = $2 and departed_at is null',
    [organizationId, userId],
  );
  return row ? toMember(row) : null;
}

async function requireOrgAndUser(tx: Queryable, organizationId: string, userId: string) {
  const [row] = await tx.query<{ org: boolean; usr: boolean }>(
    `select exists (select 1 from organizations where id = $1) as org, exists (select 1 from users where id = $2) as usr`,
    [organizationId, userId],
  );
  if (!row?.org) throw notFound('Organization');
  if (!row.usr) throw notFound('User');
}

async function lockActiveMember(tx: Queryable, organizationId: string, userId: string): Promise<MemberRow> {
  // Lock every membership of the organization: two concurrent demotions of the last two owners
  // must not both see the other one as the remaining owner.
  const rows = await tx.query<MemberRow>(
    'select * from members where organization_id = $1 order by id for update',
    [organizationId],
  );
  const member = rows.find((r) => r.user_id === userId && !r.departed_at);
  if (!member) throw notFound('Member');
  return member;
}

async function requireAnotherOwner(tx: Queryable, organizationId: string, userId: string) {
  const [row] = await tx.query<{ n: number }>(
    `select count(*)::int as n from members
      where organization_id = $1 and role = 'owner' and departed_at is null and user_id <> $2`,
    [organizationId, userId],
  );
  if (!row?.n) throw conflict('An organization must keep at least one owner');
}

/**
 * The organization a user acts in when none is named: the one they joined first. A named one must
 * be among their active memberships.
 */
export async function homeOrganization(db: Queryable, userId: string, requested?: string): Promise<string> {
  const rows = await db.query<{ organization_id: string }>(
    `select organization_id from members where user_id = $1 and departed_at is null
      and ($2::uuid is null or organization_id = $2) order by joined_at, id limit 1`,
    [userId, requested ?? null],
  );
  const row = rows[0];
  if (row) return row.organization_id;
  throw requested
    ? new ServiceError(403, 'You are not a member of that organization')
    : new ServiceError(403, 'Your user belongs to no organization');
}
