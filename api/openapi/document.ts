// Assembles the OpenAPI 3.1 document of the public API: the operations the app's routers registered
// (each a `createRoute` object, the same one that routes and validates), the pages outside the API
// plane (root, probes, this document), the security scheme and shared headers. Generated once per
// app: the routes do not change while it runs.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from 'zod';
import { ok, registerHeaders } from './components.ts';
import { errors } from './error-answers.ts';
import { registerHealth } from './health.ts';
import { registerRoot } from './root.ts';

export const API_KEY_SCHEME = 'ApiKeyAuth';

const DESCRIPTION = `Workflow execution and jobs, knowledge bases, tables, files and docs, workspaces,
execution and audit logs, usage limits.

**Authentication**: every \`/api\` request carries an API key (\`sk-service-…\`) in the \`X-API-Key\`
header. A personal key acts for its user in the workspaces that user can reach (where the workspace
allows personal keys); a workspace key acts only in its workspace. Inbound webhooks
(\`/api/webhooks/{token}\`) take no key: their URL's token, and a signature, authenticate them.

**Errors** are \`{"error": "…"}\`, with \`details\` (the field issues: \`code\`, \`path\`, \`message\`) on a
400 that names fields. Every response carries \`X-Request-Id\`.

**Rate limits** are token buckets per billed subject: sync executions, async executions, and the
\`/api/v1\` requests apart. Answers carry \`X-RateLimit-Limit\` (per minute), \`X-RateLimit-Remaining\`
and \`X-RateLimit-Reset\` (Unix seconds); a 429 carries \`Retry-After\` (seconds).`;

/** The app whose routes the document describes: any OpenAPIHono, whatever its variables. */
// biome-ignore lint/suspicious/noExplicitAny: only its registry is read
type DocumentedApp = OpenAPIHono<any>;

/** The registry holding every documented operation (the tests walk its definitions). */
export function buildRegistry(app: DocumentedApp): OpenAPIRegistry {
  const registry = new OpenAPIRegistry([app.openAPIRegistry]);
  registry.registerComponent('securitySchemes', API_KEY_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'An API key: `sk-service-` and 32 characters. Personal or workspace-scoped.',
  });
  registerHeaders(registry);
  registerRoot(registry);
  registerHealth(registry);
  registry.registerPath({
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['Service'],
    summary: 'This OpenAPI document',
    description:
      'The OpenAPI 3.1 document of this API. No API key needed. The reference page is at /docs. Its ' +
      '`servers` entry is the address this request reached, or PUBLIC_URL when the operator set one.',
    security: [],
    responses: {
      200: ok(
        {
          description: 'The document',
          schema: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
        },
        'none',
      ),
      ...errors({}, { metering: 'none', authenticated: false }),
    },
  });
  return registry;
}

export function generateDocument(app: DocumentedApp) {
  return new OpenApiGeneratorV31(buildRegistry(app).definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Workflow service API', version: '1.0.0', description: DESCRIPTION },
    security: [{ [API_KEY_SCHEME]: [] }],
    tags: [
      { name: 'Workflows', description: 'Execute deployed workflows and poll their jobs' },
      { name: 'Webhooks', description: 'Inbound webhooks: a secret URL that runs a workflow' },
      { name: 'Usage', description: 'Rate limits, spend and storage' },
      { name: 'Knowledge', description: 'Knowledge bases, their documents, and search' },
      { name: 'Tables', description: 'Tables with typed columns, and their rows' },
      { name: 'Files', description: 'Workspace files' },
      { name: 'Docs', description: 'Workspace files by folder and lifecycle' },
      { name: 'Workspaces', description: 'Create workspaces' },
      { name: 'Logs', description: 'Execution logs and audit logs' },
      { name: 'MCP', description: "A workspace's deployed workflows as MCP tools" },
      { name: 'Service', description: 'Where to start, liveness, readiness, and this document' },
    ],
  });
}

export type OpenApiDocument = ReturnType<typeof generateDocument>;

const generated = new WeakMap<DocumentedApp, OpenApiDocument>();

/** The app's document, generated on first use and kept. */
export function openApiDocument(app: DocumentedApp): OpenApiDocument {
  let doc = generated.get(app);
  if (!doc) {
    doc = generateDocument(app);
    generated.set(app, doc);
  }
  return doc;
}
