// X-API-Key on every endpoint: a missing, unknown or revoked key is a 401 before any route runs.
import { createMiddleware } from 'hono/factory';
import { authenticateApiKeys } from '../../db/api-keys.ts';
import { createBatcher } from '../../db/batcher.ts';
import { type Db, onLane } from '../../db/client.ts';
import { ServiceError } from '../../errors.ts';
import type { ApiEnv } from '../context.ts';

export function apiKeyAuth(db: Db) {
  // Requests that arrive together are authenticated together, in one query (on the lane: onLane).
  const lane = onLane(db);
  const authenticate = createBatcher((keys: string[]) => authenticateApiKeys(lane, keys));
  return createMiddleware<ApiEnv>(async (c, next) => {
    const presented = c.req.header('x-api-key');
    if (!presented) throw new ServiceError(401, 'Missing API key: send it in the X-API-Key header');
    const principal = await authenticate(presented.trim());
    if (!principal) throw new ServiceError(401, 'Invalid or revoked API key');
    c.set('principal', principal);
    await next();
  });
}
