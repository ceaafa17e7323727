// OpenAPI: GET /health (liveness) and GET /ready (readiness), the probes of orchestrators and load
// balancers. No API key.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ok } from './components.ts';
import { errors } from './error-answers.ts';

const checkResult = z.enum(['ok', 'error']);
const checks = z
  .object({ database: checkResult, queue: checkResult })
  .meta({ description: 'Each dependency: `ok`, or `error` (the reason is logged, not shown)' });

export function registerHealth(registry: OpenAPIRegistry) {
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: 'health',
    tags: ['Service'],
    summary: 'Liveness',
    description:
      'The process answers. Never touches the database, so a slow database does not get it restarted.',
    security: [],
    responses: {
      200: ok(
        {
          description: 'Alive',
          schema: z.object({ status: z.literal('ok') }).meta({ id: 'Health' }),
          example: { status: 'ok' },
        },
        'none',
      ),
      ...errors({}, { metering: 'none', authenticated: false }),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/ready',
    operationId: 'ready',
    tags: ['Service'],
    summary: 'Readiness',
    description:
      'The process can do its work: the database answers and the queues are reachable (each within 2 s).',
    security: [],
    responses: {
      200: ok(
        {
          description: 'Ready',
          schema: z.object({ status: z.literal('ready'), checks }).meta({ id: 'Ready' }),
          example: { status: 'ready', checks: { database: 'ok', queue: 'ok' } },
        },
        'none',
      ),
      503: ok(
        {
          description: 'Not ready: a check failed',
          schema: z.object({ error: z.string(), checks }).meta({ id: 'NotReady' }),
          example: { error: 'Not ready', checks: { database: 'ok', queue: 'error' } },
        },
        'none',
      ),
      ...errors({}, { metering: 'none', authenticated: false }),
    },
  });
}
