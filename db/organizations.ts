// Organizations: the top of the tenancy tree, each with a unique slug and a plan.
import { conflict, isUniqueViolation, notFound } from '../errors.ts';
import { ADMIN_ACTOR, recordAudit } from './audit-logs.ts';
import type { Queryable } from './client.ts';
import type { PlanName } from './plans.ts';
import { freeSlug, slugify } from './slugs.ts';

export interface Organization {
  id: string;
  name: string;
  slug: string;
  plan: PlanName;
  createdAt: string;
  updatedAt: string;
}

type OrgRow = { id: string; name: string; slug: string; plan: PlanName; created_at: Date; updated_at: Date };

const toOrganization = (r: OrgRow): Organization => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  plan: r.plan,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export async function createOrganization(
  db: Queryable,
  input: { name: string; slug?: string; plan?: PlanName },
): Promise<Organization> {
  // Two creations of the same name can race to one derived slug: the unique index lets one win, and
  // the loser picks the next free slug. An explicit slug that is taken is the caller's conflict.
  for (let attempt = 0; ; attempt++) {
    let slug = input.slug;
    try {
      return await db.transaction(async (tx) => {
        slug ??= await freeSlug(
          tx,
          slugify(input.name, 'org'),
          'select slug from organizations where slug = $1 or slug like $2',
          [],
        );
        const [row] = await tx.query<OrgRow>(
          'insert into organizations (name, slug, plan) values ($1, $2, $3) returning *',
          [input.name, slug, input.plan ?? 'free'],
        );
        const org = toOrganization(row as OrgRow);
        await recordAudit(tx, ADMIN_ACTOR, {
          organizationId: org.id,
          action: 'organization.created',
          resourceType: 'organization',
          resourceId: org.id,
          metadata: { name: org.name, slug: org.slug, plan: org.plan },
        });
        return org;
      });
    } catch (err) {
      if (!isUniqueViolation(err, 'organizations_slug_key')) throw err;
      if (input.slug === undefined && attempt < 4) continue;
      throw conflict(`Organization slug "${slug}" is already taken`);
    }
  }
}

export async function listOrganizations(db: Queryable): Promise<Organization[]> {
  return (await db.query<OrgRow>('select * from organizations order by created_at, id')).map(toOrganization);
}

export async function setOrganizationPlan(
  db: Queryable,
  organizationId: string,
  plan: PlanName,
): Promise<Organization> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<OrgRow>(
      'update organizations set plan = $2, updated_at = now() where id = $1 returning *',
      [organizationId, plan],
    );
    if (!row) throw notFound('Organization');
    await recordAudit(tx, ADMIN_ACTOR, {
      organizationId,
      action: 'organization.plan_changed',
      resourceType: 'organization',
      resourceId: organizationId,
      metadata: { plan },
    });
    return toOrganization(row);
  });
}
