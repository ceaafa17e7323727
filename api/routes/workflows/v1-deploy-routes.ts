// /api/v1/workflows/{id}/deploy, …/versions, …/rollback, …/export and /api/v1/workflows/import: a
// workflow's deployments over an API key, for CI/CD. A deployment snapshots the draft as the next
// immutable version; executions, and the workspace's MCP tools (read from the deployed versions at
// every request, api/routes/mcp/server.ts), follow it at once. Changes need write permission.
import { createRoute } from '@hono/zod-openapi';
import { stringify as toYaml } from 'yaml';
import { authorizeWorkspace } from '../../../db/access.ts';
import { recordAudit } from '../../../db/audit-logs.ts';
import {
  deployWorkflow,
  listVersions,
  rollbackWorkflow,
  undeployWorkflow,
} from '../../../db/workflow-deployments.ts';
import { getWorkflow, insertWorkflow, type Workflow } from '../../../db/workflows.ts';
import { ServiceError } from '../../../errors.ts';
import { parseDefinition } from '../../../runner/executor/definition.ts';
import type { ApiDeps } from '../../context.ts';
import { API_RATE_LIMITED, jsonBody, ok } from '../../openapi/components.ts';
import { errors } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { jsonOrYamlBody, reachWorkflow } from './v1-access.ts';
import {
  deployedExample,
  draftExample,
  exportErrors,
  exportExample,
  importErrors,
  importRequestExample,
  rollbackErrors,
  rolledBackExample,
  undeployErrors,
  undeployedExample,
  versionListExample,
  writeErrors,
} from './v1-examples.ts';
import { presentWorkflow, tags } from './v1-routes.ts';
import {
  deployed,
  exportAnswer,
  exportQuery,
  importBody,
  rollbackBody,
  rolledBack,
  undeployed,
  versionList,
  workflowFound,
  workflowPath,
  yamlText,
} from './v1-schemas.ts';

const rated = <C extends object>(cases: C) =>
  errors({ ...cases, 429: API_RATE_LIMITED }, { metering: 'api' });
const exportYaml = toYaml(exportExample);

export const deployWorkflowRoute = createRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/deploy',
  operationId: 'deployWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Deploy a workflow',
  description:
    'Snapshots the draft as the next version (1, 2, 3, …) and makes it the one executions and MCP ' +
    'tools run, at once. The draft is checked again first (400 with the paths of its problems).',
  request: { params: workflowPath },
  responses: {
    200: ok({ description: 'Deployed', schema: deployed, example: deployedExample }, 'api'),
    ...rated(writeErrors),
  },
});

export const undeployWorkflowRoute = createRoute({
  method: 'delete',
  path: '/api/v1/workflows/{id}/deploy',
  operationId: 'undeployWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Undeploy a workflow',
  description: 'Executions are refused until it is deployed (or rolled back) again; its versions are kept.',
  request: { params: workflowPath },
  responses: {
    200: ok({ description: 'Undeployed', schema: undeployed, example: undeployedExample }, 'api'),
    ...rated(undeployErrors),
  },
});

export const listVersionsRoute = createRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/versions',
  operationId: 'listWorkflowVersions',
  scope: 'workflows:read' as const,
  tags,
  summary: 'List deployed versions',
  description: 'Every version ever deployed, oldest first; `deployed` marks the one executions run.',
  request: { params: workflowPath },
  responses: {
    200: ok({ description: 'The versions', schema: versionList, example: versionListExample }, 'api'),
    ...rated({
      400: writeErrors[400],
      403: 'Personal API keys are disabled in this workspace; use a workspace key',
      404: 'Workflow not found',
    }),
  },
});

export const rollbackWorkflowRoute = createRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/rollback',
  operationId: 'rollbackWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Roll back to a version',
  description:
    'Makes an existing version the deployed one again: no version is made and the draft is left as it ' +
    'is. A version that does not exist is a 404.',
  request: { params: workflowPath, body: jsonBody(rollbackBody, { version: 1 }) },
  responses: {
    200: ok({ description: 'Rolled back', schema: rolledBack, example: rolledBackExample }, 'api'),
    ...rated(rollbackErrors),
  },
});

export const exportWorkflowRoute = createRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/export',
  operationId: 'exportWorkflow',
  scope: 'workflows:read' as const,
  tags,
  summary: 'Export a workflow',
  description:
    'The draft (or deployed version N with `?version=N`) in an envelope `POST /api/v1/workflows/import` ' +
    'takes as it is: `{success, data: envelope}` as JSON, or the bare envelope as YAML with `format=yaml` ' +
    '(a file to keep in a repository). Read permission is enough.',
  request: { params: workflowPath, query: exportQuery },
  responses: {
    200: {
      ...ok(
        {
          description: 'The envelope',
          schema: exportAnswer,
          example: { success: true, data: exportExample },
        },
        'api',
      ),
      content: {
        'application/json': { schema: exportAnswer, example: { success: true, data: exportExample } },
        'application/yaml': { schema: yamlText('The envelope'), example: exportYaml },
      },
    },
    ...rated(exportErrors),
  },
});

export const importWorkflowRoute = createRoute({
  method: 'post',
  path: '/api/v1/workflows/import',
  operationId: 'importWorkflow',
  scope: 'workflows:write' as const,
  tags,
  summary: 'Import a workflow',
  description:
    'Creates a draft from an export envelope (JSON, or YAML with `Content-Type: application/yaml`) or a ' +
    'bare definition; deployed, it runs as the exported one. `name` defaults to the exported name. ' +
    'Needs write permission.',
  request: {
    body: {
      required: true,
      content: {
        'application/json': { schema: importBody, example: importRequestExample },
        'application/yaml': { schema: yamlText('The same fields'), example: toYaml(importRequestExample) },
      },
    },
  },
  responses: {
    201: ok({ description: 'Imported (not deployed)', schema: workflowFound, example: draftExample }, 'api'),
    ...rated(importErrors),
  },
});

/** An import's definition and the names it carries: an export envelope, or a bare definition. */
function unwrap(workflow: unknown) {
  const o =
    workflow !== null && typeof workflow === 'object' && !Array.isArray(workflow)
      ? (workflow as Record<string, unknown>)
      : {};
  if (!('definition' in o))
    return { raw: workflow, path: ['workflow'], name: undefined, description: undefined };
  const meta =
    o.workflow !== null && typeof o.workflow === 'object' ? (o.workflow as Record<string, unknown>) : {};
  const text = (v: unknown, max: number) =>
    typeof v === 'string' && v.trim() !== '' ? v.slice(0, max) : undefined;
  return {
    raw: o.definition,
    path: ['workflow', 'definition'],
    name: text(meta.name, 200)?.trim(),
    description: text(meta.description, 2000),
  };
}

export function v1DeployRoutes({ db, clock }: ApiDeps, guards: Guards) {
  return new Router(guards, { rateLimited: true })
    .openapi(deployWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { access } = await reachWorkflow(db, c.get('principal'), id, 'write');
      const done = await deployWorkflow(db, access.actor, id, parseDefinition);
      return c.json({ success: true as const, data: { id, isDeployed: true as const, ...done } }, 200);
    })
    .openapi(undeployWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { access } = await reachWorkflow(db, c.get('principal'), id, 'write');
      await undeployWorkflow(db, access.actor, id);
      return c.json(
        { success: true as const, data: { id, isDeployed: false as const, deployedAt: null } },
        200,
      );
    })
    .openapi(listVersionsRoute, async (c) => {
      const { id } = c.req.valid('param');
      await reachWorkflow(db, c.get('principal'), id, 'read');
      const versions = await listVersions(db, id);
      return c.json(
        {
          success: true as const,
          data: versions.map((v) => ({
            version: v.version,
            deployed: v.deployed,
            deployedAt: v.deployedAt,
            deployedBy: v.deployedBy,
          })),
        },
        200,
      );
    })
    .openapi(rollbackWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const { version } = c.req.valid('json');
      const { access } = await reachWorkflow(db, c.get('principal'), id, 'write');
      const done = await rollbackWorkflow(db, access.actor, id, version, parseDefinition);
      return c.json({ success: true as const, data: { id, isDeployed: true as const, ...done } }, 200);
    })
    .openapi(exportWorkflowRoute, async (c) => {
      const { id } = c.req.valid('param');
      const q = c.req.valid('query');
      const { workflow } = await reachWorkflow(db, c.get('principal'), id, 'read');
      let definition: unknown = workflow.definition;
      if (q.version !== undefined) {
        const found = (await listVersions(db, id)).find((v) => v.version === q.version);
        if (!found) throw new ServiceError(404, `Version ${q.version} of this workflow not found`);
        definition = found.definition;
      }
      const envelope = {
        version: '1.0' as const,
        exportedAt: clock().toISOString(),
        workflow: {
          id: workflow.id,
          name: workflow.name,
          description: workflow.description,
          folderId: workflow.folderId,
        },
        ...(q.version !== undefined ? { deployedVersion: q.version } : {}),
        definition: definition as Record<string, unknown>,
      };
      if (q.format === 'yaml') {
        return c.body(toYaml(envelope), 200, { 'Content-Type': 'application/yaml; charset=utf-8' }) as never;
      }
      return c.json({ success: true as const, data: envelope }, 200);
    })
    .plain(importWorkflowRoute, async (c) => {
      const body = await jsonOrYamlBody(c, importBody);
      const access = await authorizeWorkspace(db, c.get('principal'), body.workspaceId, 'write');
      const from = unwrap(body.workflow);
      const definition = parseDefinition(from.raw, from.path);
      const name = body.name ?? from.name ?? 'Imported workflow';
      const workflow = await db.transaction(async (tx) => {
        const { id } = await insertWorkflow(tx, access.actor, {
          organizationId: access.workspace.organization_id,
          workspaceId: body.workspaceId,
          name,
          ...(from.description !== undefined ? { description: from.description } : {}),
          folderId: body.folderId ?? null,
          definition,
        });
        await recordAudit(tx, access.actor, {
          organizationId: access.workspace.organization_id,
          workspaceId: body.workspaceId,
          action: 'workflow.imported',
          resourceType: 'workflow',
          resourceId: id,
          metadata: { name, ...(body.folderId ? { folderId: body.folderId } : {}) },
        });
        return (await getWorkflow(tx, id)) as Workflow;
      });
      return c.json({ success: true as const, data: presentWorkflow(workflow) }, 201);
    }).app;
}
