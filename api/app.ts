// Builds the public REST API as a Hono app (no listening here: tests call app.request()).
import { OpenAPIHono } from '@hono/zod-openapi';
import { requestId } from 'hono/request-id';
import { readAccessAhead } from '../db/access.ts';
import { healthRoutes } from '../http/health.ts';
import { requestLog } from '../http/request-log.ts';
import { createEmbedders } from '../runner/embeddings/index.ts';
import { createStorage } from '../storage/index.ts';
import type { ApiDeps, ApiEnv } from './context.ts';
import { streamReplayer } from './execution-stream-replay.ts';
import { apiKeyAuth } from './middleware/auth.ts';
import { jsonBodyLimit } from './middleware/body-limit.ts';
import { errorHandler, notFoundHandler } from './middleware/errors.ts';
import { httpMetrics } from './middleware/http-metrics.ts';
import { idempotency } from './middleware/idempotency.ts';
import { apiRateLimit } from './middleware/rate-limit.ts';
import { openApiDocument } from './openapi/document.ts';
import { openApiRoutes } from './openapi/serve.ts';
import { auditLogRoutes } from './routes/audit-logs/routes.ts';
import { docRoutes } from './routes/docs/routes.ts';
import { fileRoutes } from './routes/files/routes.ts';
import { jobRoutes } from './routes/jobs/routes.ts';
import { knowledgeRoutes } from './routes/knowledge/routes.ts';
import { logRoutes } from './routes/logs/routes.ts';
import { mcpRoutes } from './routes/mcp/routes.ts';
import { approvalLinkRoutes } from './routes/resume/link-routes.ts';
import { resumeRoutes } from './routes/resume/routes.ts';
import type { Guards } from './routes/router.ts';
import { columnRoutes } from './routes/tables/column-routes.ts';
import { tableRoutes } from './routes/tables/routes.ts';
import { rowRoutes } from './routes/tables/row-routes.ts';
import { tableTransferRoutes } from './routes/tables/transfer-routes.ts';
import { usageLimitRoutes } from './routes/usage-limits/routes.ts';
import { webhookRoutes } from './routes/webhooks/routes.ts';
import { cancelRoutes } from './routes/workflows/cancel-routes.ts';
import { workflowRoutes } from './routes/workflows/routes.ts';
import { runRoutes } from './routes/workflows/runs-routes.ts';
import { streamRoutes } from './routes/workflows/stream-routes.ts';
import { v1DeployRoutes } from './routes/workflows/v1-deploy-routes.ts';
import { v1WorkflowRoutes } from './routes/workflows/v1-routes.ts';
import { workspaceRoutes } from './routes/workspaces/routes.ts';
import '../zod-messages.ts';

export function createApp(deps: ApiDeps) {
  const app = new OpenAPIHono<ApiEnv>();
  app.use(requestId({ headerName: 'X-Request-Id' }));
  app.onError(errorHandler(deps.log));
  app.notFound(notFoundHandler);
  app.use(requestLog(deps.log));
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  // Probes answer without an API key: they are registered outside /api.
  app.route('/', healthRoutes(deps));
  // The root, the OpenAPI document and the reference page (/docs) are public: registered before the
  // key check.
  app.route(
    '/',
    openApiRoutes(deps.config, () => openApiDocument(app)),
  );
  // Each route stands behind the guards it calls for (api/routes/router.ts): idempotency where it
  // documents the Idempotency-Key header, then the `api` bucket on the /api/v1, jobs and usage
  // routes (execute judges its own buckets as it admits executions).
  const guards: Guards = {
    idempotency: idempotency(deps, streamReplayer(deps)),
    rateLimit: apiRateLimit(deps),
    readAccessAhead: (principal, workspaceId) => readAccessAhead(deps.db, principal, workspaceId),
  };
  // Inbound webhooks authenticate by the secret token in their URL (and a signature), not a key.
  app.route('/', webhookRoutes(deps, guards));
  // Approval links authenticate by their signature (jobs/approval-links.ts): HTML pages, no key.
  app.route('/', approvalLinkRoutes(deps));
  app.use('/api/*', apiKeyAuth(deps.db));
  app.use('/api/*', jsonBodyLimit());
  // In the order the document lists them (the reference page groups them by tag).
  app.route('/', workflowRoutes(deps, guards));
  app.route('/', cancelRoutes(deps, guards));
  app.route('/', resumeRoutes(deps, guards));
  app.route('/', streamRoutes(deps, guards));
  // Before v1WorkflowRoutes: POST …/import is no workflow id.
  app.route('/', v1DeployRoutes(deps, guards));
  app.route('/', v1WorkflowRoutes(deps, guards));
  app.route('/', runRoutes(deps, guards));
  app.route('/', jobRoutes(deps, guards));
  app.route('/', usageLimitRoutes(deps, guards));
  const storage = createStorage(deps.config);
  app.route('/', knowledgeRoutes({ ...deps, storage, embedders: createEmbedders(deps.config) }, guards));
  app.route('/', tableRoutes(deps, guards));
  // Before the row routes: GET …/rows/export is no row id.
  app.route('/', tableTransferRoutes({ ...deps, storage }, guards));
  app.route('/', rowRoutes(deps, guards));
  app.route('/', columnRoutes(deps, guards));
  app.route('/', fileRoutes({ ...deps, storage }, guards));
  app.route('/', docRoutes(deps, guards));
  app.route('/', workspaceRoutes(deps, guards));
  app.route('/', logRoutes(deps, guards));
  app.route('/', auditLogRoutes(deps, guards));
  app.route('/', mcpRoutes(deps, guards));
  return app;
}

export type ApiApp = ReturnType<typeof createApp>;
