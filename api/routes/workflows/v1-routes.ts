// /api/v1/workflows: list a workspace's workflows (cursor-paged), get one with its draft, create one
// (JSON or YAML) and update its draft. Deployments, versions, export and import are in
// v1-deploy-routes.ts. Reads need read permission on the workspace, changes write permission; the
// key rules (workspace vs personal keys, allowPersonalApiKeys) are those of db/access.ts.
import { createRoute } from '@hono/zod-openapi';
import { authorizeWorkspace } from '../../../db/access.ts';
import { archiveWorkflow } from '../../../db/workflow-archive.ts';
import { requireWorkflowFolder } from '../../../db/workflow-folders.ts';
import { listWorkflowPage } from '../../../db/workflow-pages.ts';
import { createWorkflow, updateWorkflow, type Workflow } from '../../../db/workflows.ts';
import { parseDefinition } from '../../../runner/executor/definition.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, jsonBody, ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { jsonOrYamlBody, reachWorkflow } from './v1-access.ts';
import {
  archivedExample,
  createErrors,
  createRequestExample,
  createYamlExample,
  deleteErrors,
  draftExample,
  getErrors,
  listErrors,
  workflowFoundExample,
  workflowPageExample,
  writeErrors,
} from './v1-examples.ts';
import {
  archived,
  createWorkflowBody,
  listWorkflowsQuery,
  updateWorkflowBody,
  workflowFound,
  workflowPage,
  workflowPath,
  yamlText,
} from './v1-schemas.ts';

export const tags = ['Workflows'];
export const rated = <C extends object>(cases: C) =>
  errors({ ...cases, 429: API_RATE_LIMITED }, { metering: 'api' });

/** A workflow as the v1 answers show it. */
export function presentWorkflow(w: Workflow) {
  return {
    id: w.id,
    workspaceId: w.workspaceId,
    name: w.name,
    description: w.description,
    folderId: w.folderId,
    isDeployed: w.deployedVersion !== null,
    deployedVersion: w.deployedVersion,
    deployedAt: w.deployedAt,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
    definition: w.definition as unknown as Record<string, unknown>,
    inputs: w.definition.inputs as Record<string, unknown>,
    deployment:
      w.deployedVersion !== null && w.deployedAt !== null
        ? { version: w.deployedVersion, deployedAt: w.deployedAt }
        : null,
  };
}

export const listWorkflowsRoute = createRoute({
  method: 'get',
  path: '/api/v1/workflows',
  operationId: 'listWorkflows',
  scope: 'workflows:read' as const,
  tags,
  summary: 'List workflows',
  description:
    "A workspace's workflows, oldest first, cursor-paged (`nextCursor` is absent on the last page; a " +
    'cursor not returned by this endpoint is a 400); with `folderId`, only those in that workflow ' +
    'folder. Read permission is enough.',
  request: { query: listWorkflowsQuery },
  responses: {
    200: ok(
      { description: 'A page of workflows', schema: workflowPage, example: workflowPageExample },
      'api',
    ),
    ...rated(listErrors),
  },
});

export const getWorkflowRoute = createRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}',
  operationId: 'getWorkflow',
  scope: 'workflows:read' as const,
  tags,
  summary: 'Get a workflow',
  description: 'Name, description, folder, draft definition, declared inputs, deployment and timestamps.',
  request: { params: workflowPath },
  responses: {
    200: ok({ description: 'The workflow', schema: workflowFound, example: workflowFoundExample }, 'api'),
    ...rated(getErrors),
  },
});

export const createWorkflowRoute = createRoute({
  method: 'post',
  path: '/api/v1/workflows',
  operationId: 'createWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Create a workflow',
  description:
    'Creates a draft from a definition: JSON, or the same fields as YAML with `Content-Type: ' +
    'application/yaml`. An invalid definition is a 400 whose `details` name each problem by its path. ' +
    'Needs write permission. Deploy it to run it.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': { schema: createWorkflowBody, example: createRequestExample },
        'application/yaml': { schema: yamlText('The same fields'), example: createYamlExample },
      },
    },
  },
  responses: {
    201: ok({ description: 'Created (not deployed)', schema: workflowFound, example: draftExample }, 'api'),
    ...rated(createErrors),
  },
});

export const updateWorkflowRoute = createRoute({
  method: 'put',
  path: '/api/v1/workflows/{id}',
  operationId: 'updateWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Update a workflow',
  description:
    'Changes any of name, description, folder (`folderId`, null for the top of the workspace) and the ' +
    'draft definition. The deployed version is left as it is: deploy again to run the new draft. Needs ' +
    'write permission.',
  request: {
    params: workflowPath,
    body: jsonBody(updateWorkflowBody, { description: 'Says hello, politely' }),
  },
  responses: {
    200: ok(
      { description: 'The workflow as changed', schema: workflowFound, example: workflowFoundExample },
      'api',
    ),
    ...rated(writeErrors),
  },
});

export const deleteWorkflowRoute = createRoute({
  method: 'delete',
  path: '/api/v1/workflows/{id}',
  operationId: 'deleteWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Delete a workflow',
  description:
    'Archives the workflow: it is undeployed at once (executions, schedules, webhooks and MCP tools stop) ' +
    'and is gone from these routes (404), while its executions, logs and audit trail stay. Needs admin ' +
    'permission (a personal key of a workspace admin; workspace keys hold write, not admin).',
  request: { params: workflowPath },
  responses: {
    200: ok({ description: 'Archived', schema: archived, example: archivedExample }, 'api'),
    ...rated(deleteErrors),
  },
});

export function v1WorkflowRoutes({ db }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(listWorkflowsRoute, async (c) => {
      const q = c.req.valid('query');
      await authorizeWorkspace(db, c.get('principal'), q.workspaceId, 'read');
      if (q.folderId) await requireWorkflowFolder(db, q.workspaceId, q.folderId);
      const page = await listWorkflowPage(db, { ...q, deployedOnly: q.deployedOnly === 'true' });
      return c.json({ success: true as const, ...page }, 200);
    })
    .openapi(getWorkflowRoute, async (c) => {
      const { workflow } = await reachWorkflow(db, c.get('principal'), c.req.valid('param').id, 'read');
      return c.json({ success: true as const, data: presentWorkflow(workflow) }, 200);
    })
    .plain(createWorkflowRoute, async (c) => {
      const body = await jsonOrYamlBody(c, createWorkflowBody);
      const access = await authorizeWorkspace(db, c.get('principal'), body.workspaceId, 'write');
      const workflow = await createWorkflow(db, access.actor, {
        workspaceId: body.workspaceId,
        name: body.name,
        ...(body.description !== undefined ? { description: body.description } : {}),
        folderId: body.folderId ?? null,
        definition: parseDefinition(body.definition),
      });
      return c.json({ success: true as const, data: presentWorkflow(workflow) }, 201);
    })
    .openapi(updateWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { definition, ...changes } = c.req.valid('json');
      const { access } = await reachWorkflow(db, c.get('principal'), id, 'write');
      const workflow = await updateWorkflow(db, access.actor, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.folderId !== undefined ? { folderId: changes.folderId } : {}),
        ...(definition === undefined ? {} : { definition: parseDefinition(definition) }),
      });
      return c.json({ success: true as const, data: presentWorkflow(workflow) }, 200);
    })
    .openapi(deleteWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { access } = await reachWorkflow(db, c.get('principal'), id, 'admin');
      const done = await archiveWorkflow(db, access.actor, id);
      return c.json({ success: true as const, data: { ...done, archived: true as const } }, 200);
    }).app;
}
