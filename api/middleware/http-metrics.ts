// Request latency for Prometheus: `http_request_duration_seconds` by method, matched route pattern
// and status. The route is the pattern a handler was registered with (`/api/v1/tables/:tableId`),
// never the URL, so the number of series stays bounded whatever clients send.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import { Histogram, type Registry } from 'prom-client';

const NAME = 'http_request_duration_seconds';
// Up to the longest a sync execution may wait (minutes), not only the sub-second CRUD calls.
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function httpMetrics(registry: Registry) {
  const histogram =
    (registry.getSingleMetric(NAME) as Histogram<'method' | 'route' | 'status'> | undefined) ??
    new Histogram({
      name: NAME,
      help: 'Duration of HTTP requests in seconds, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: BUCKETS,
      registers: [registry],
    });
  return createMiddleware(async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      histogram.observe(
        { method: c.req.method, route: routeOf(c), status: String(c.res.status) },
        (performance.now() - started) / 1000,
      );
    }
  });
}

/**
 * The pattern of the handler that serves this method and path, even when a middleware answered
 * first (a 401 still counts against its route); `unmatched` when no handler would have (404).
 * Middleware is registered for every method and takes `next`; handlers do not.
 */
function routeOf(c: Context): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const route = routes[i];
    if (route && (route.method !== 'ALL' || route.handler.length < 2)) return route.path;
  }
  return 'unmatched';
}
