// Builds the public REST API as a Hono app (no listening here: tests call app.request()).
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { healthRoutes } from '../http/health.ts';
import { requestLog } from '../http/request-log.ts';
import { createEmbedders } from '../runner/embeddings/index.ts';
import { createStorage } from '../storage/index.ts';
import type { ApiDeps, ApiEnv } from './context.ts';
import { apiKeyAuth } from './middleware/auth.ts';
import { jsonBodyLimit } from './middleware/body-limit.ts';
import { errorHandler, notFoundHandler } from './middleware/errors.ts';
import { httpMetrics } from './middleware/http-metrics.ts';
import { IDEMPOTENT_ROUTES, idempotency } from './middleware/idempotency.ts';
import { apiRateLimit } from './middleware/rate-limit.ts';
import { openApiRoutes } from './openapi/serve.ts';
import { auditLogRoutes } from './routes/audit-logs.ts';
import { docRoutes } from './routes/docs.ts';
import { fileRoutes } from './routes/files.ts';
import { jobRoutes } from './routes/jobs.ts';
import { knowledgeRoutes } from './routes/knowledge.ts';
import { logRoutes } from './routes/logs.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { tableRoutes } from './routes/tables.ts';
import { usageLimitRoutes } from './routes/usage-limits.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { workspaceRoutes } from './routes/workspaces.ts';
import '../zod-messages.ts';

export function createApp(deps: ApiDeps) {
  const app = new Hono<ApiEnv>();
  app.use(requestId({ headerName: 'X-Request-Id' }));
  app.onError(errorHandler(deps.log));
  app.notFound(notFoundHandler);
  app.use(requestLog(deps.log));
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  // Probes answer without an API key: they are registered outside /api.
  app.route('/', healthRoutes(deps));
  // The root, the OpenAPI document and the reference page (/docs) are public: registered before the
  // key check.
  app.route('/', openApiRoutes(deps.config));
  // Inbound webhooks authenticate by the secret token in their URL (and a signature), not a key.
  app.route('/api/webhooks', webhookRoutes(deps));
  app.use('/api/*', apiKeyAuth(deps.db));
  app.use('/api/*', jsonBodyLimit());
  // Before the rate limit: a replayed answer takes no token.
  const idempotent = idempotency(deps);
  for (const path of IDEMPOTENT_ROUTES) app.post(path, idempotent);
  // Execute judges its own buckets as it admits executions; the rest share the `api` bucket.
  const rateLimit = apiRateLimit(deps);
  for (const path of ['/api/v1/*', '/api/jobs/*', '/api/users/*']) app.use(path, rateLimit);
  app.route('/api/v1/workspaces', workspaceRoutes(deps));
  app.route('/api/v1/audit-logs', auditLogRoutes(deps));
  app.route('/api/v1/logs', logRoutes(deps));
  app.route('/api/v1/tables', tableRoutes(deps));
  const storage = createStorage(deps.config);
  app.route('/api/v1/files', fileRoutes({ ...deps, storage }));
  app.route(
    '/api/v1/knowledge',
    knowledgeRoutes({ ...deps, storage, embedders: createEmbedders(deps.config) }),
  );
  app.route('/api/v1/docs', docRoutes(deps));
  app.route('/api/workflows', workflowRoutes(deps));
  app.route('/api/jobs', jobRoutes(deps));
  app.route('/api/users/me/usage-limits', usageLimitRoutes(deps));
  app.route('/api/mcp', mcpRoutes(deps));
  return app;
}

export type ApiApp = ReturnType<typeof createApp>;
