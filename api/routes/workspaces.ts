// POST /api/v1/workspaces: a personal key creates a workspace in its holder's organization.
import { Hono } from 'hono';
import { z } from 'zod';
import { actorOf } from '../../db/access.ts';
import { homeOrganization } from '../../db/members.ts';
import { isStorableText } from '../../db/table-values.ts';
import { createWorkspace } from '../../db/workspaces.ts';
import { forbidden } from '../../errors.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import { jsonBody } from '../middleware/validate.ts';

export const createWorkspaceBody = z.object({
  // Postgres text holds no NUL and no lone surrogate: refused here rather than failing as a 500.
  name: z.string().trim().min(1).max(100).refine(isStorableText, 'Not storable text'),
  color: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'Must be a colour in #RRGGBB form')
    .optional(),
  skipDefaultWorkflow: z.boolean().optional(),
  /** For a user in several organizations; defaults to the one they joined first. */
  organizationId: z.uuid().optional(),
});

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
