// POST /api/v1/workspaces: a personal key creates a workspace in its holder's organization.
import { Hono } from 'hono';
import { actorOf } from '../../db/access.ts';
import { homeOrganization } from '../../db/members.ts';
import { createWorkspace, newWorkspaceFields } from '../../db/workspaces.ts';
import { forbidden } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { jsonBody } from '../middleware/validate.ts';

/** The body is the fields of a new workspace (db/workspaces.ts), shared with the admin plane. */
export const createWorkspaceBody = newWorkspaceFields;

export function workspaceRoutes({ db }: ApiDeps) {
  return new Hono<ApiEnv>().post('/', async (c) => {
    const principal = c.get('principal');
    if (principal.type !== 'personal') throw forbidden('Creating a workspace needs a personal API key');
    const body = await jsonBody(c, createWorkspaceBody);
    const organizationId = await homeOrganization(db, principal.userId, body.organizationId);
    const workspace = await createWorkspace(db, actorOf(principal), {
      organizationId,
      ownerId: principal.userId,
      name: body.name,
      ...(body.color ? { color: body.color.toUpperCase() } : {}),
      skipDefaultWorkflow: body.skipDefaultWorkflow === true,
    });
    return c.json({ success: true, data: { workspace } });
  });
}
