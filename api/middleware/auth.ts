// X-API-Key on every endpoint: a missing, unknown or revoked key is a 401 before any route runs.
import { createMiddleware } from 'hono/factory';
import { authenticateApiKey } from '../../db/api-keys.ts';
import type { Db } from '../../db/client.ts';
import { ServiceError } from '../../db/errors.ts';
import type { ApiEnv } from '../context.ts';

export function apiKeyAuth(db: Db) {
  return createMiddleware<ApiEnv>(async (c, next) => {
    const presented = c.req.header('x-api-key');
    if (!presented) throw new ServiceError(401, 'Missing API key: send it in the X-API-Key header');
    const principal = await authenticateApiKey(db, presented.trim());
    if (!principal) throw new ServiceError(401, 'Invalid or revoked API key');
    c.set('principal', principal);
    await next();
  });
}
