// What the /api/v1/workflows routes share: a workflow found by id with the caller's access to it,
// and a body read as JSON or (for create and import) YAML.
import type { Context } from 'hono';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { authorizeResource, type WorkspaceAccess } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import type { Queryable } from '../../../db/client.ts';
import { isArchived } from '../../../db/workflow-archive.ts';
import { getWorkflow, type Workflow } from '../../../db/workflows.ts';
import type { WorkspacePermission } from '../../../db/workspaces.ts';
import { notFound, ServiceError } from '../../../errors.ts';
import { invalidRequest, jsonValueOf, refuseUnstorable, utf8Text } from '../../middleware/validate.ts';

/**
 * The workflow and the caller's access to its workspace, holding `need`. A key that cannot act in
 * that workspace at all gets the same 404 as a missing workflow: other workspaces' ids stay unconfirmed.
 */
export async function reachWorkflow(
  db: Queryable,
  principal: Principal,
  id: string,
  need: WorkspacePermission,
): Promise<{ workflow: Workflow; access: WorkspaceAccess }> {
  const [workflow, archived] = await Promise.all([getWorkflow(db, id), isArchived(db, id)]);
  // An archived (deleted) workflow is gone for these routes.
  if (!workflow || archived) throw notFound('Workflow');
  const access = await authorizeResource(db, principal, workflow.workspaceId, need, 'Workflow');
  return { workflow, access };
}

const isYaml = (contentType: string | undefined) =>
  /^(application|text)\/(x-)?yaml\s*(;|$)/i.test(contentType ?? '');

/**
 * A body checked against `schema`: YAML when the Content-Type says so, JSON otherwise (as every
 * other route reads it, whatever the Content-Type). A YAML syntax error is a 400 naming its line.
 */
export async function jsonOrYamlBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = utf8Text(await c.req.arrayBuffer());
  let value: unknown;
  if (isYaml(c.req.header('content-type'))) {
    try {
      // The parser's alias limit (100) keeps an alias bomb from expanding without bound.
      value = text.trim() === '' ? {} : parseYaml(text, { maxAliasCount: 100 });
    } catch (err) {
      throw new ServiceError(400, `Malformed YAML body: ${(err as Error).message.split('\n')[0]}`);
    }
    refuseUnstorable(value);
  } else {
    value = jsonValueOf(text);
  }
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest('json', result.error);
  return result.data;
}
