// Scopes on the routes: every route declares the scope a key needs for it (`scope` on its
// `createRoute` object, required by the Router's typing, so a new route cannot forget it). The
// Router puts the check first in the route's guard chain (after authentication, before idempotency
// and the rate limit: a refused call replays nothing and takes no token) and documents the scope as
// the operation's security requirement, with the 403 it answers.
import type { RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { grants, type Scope } from '../../db/key-scopes.ts';
import { ServiceError } from '../../errors.ts';
import type { ApiEnv } from '../context.ts';
import { API_KEY_SCHEME } from '../openapi/document.ts';

/**
 * A route and the scope it needs. `null` only where no scope applies, said on purpose: a route
 * without a key (inbound webhooks), or a key's own usage figures.
 */
export type ScopedRoute = RouteConfig & { scope: Scope | null };

export const scopeRefusal = (scope: Scope) =>
  `This API key is limited to scopes that do not include ${scope}, which this operation needs`;

/** The guard refusing a key whose scopes do not grant `scope`: 403 naming it. */
export function requireScope(scope: Scope): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (!grants(c.get('principal').scopes, scope)) throw new ServiceError(403, scopeRefusal(scope));
    await next();
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a documented answer is plain JSON to amend
type Json = any;

/** The 403 example list of a documented answer, with the scope's refusal added. */
function withRefusal(answer: Json, scope: Scope): Json {
  const media = answer.content['application/json'];
  const existing: Json[] =
    media.example !== undefined
      ? [media.example]
      : Object.values<Json>(media.examples ?? {}).map((e) => e.value);
  const list = [...existing, { error: scopeRefusal(scope) }];
  const { example: _one, examples: _many, ...rest } = media;
  return {
    ...answer,
    content: {
      'application/json': {
        ...rest,
        examples: Object.fromEntries(list.map((e, i) => [`case${i + 1}`, { summary: e.error, value: e }])),
      },
    },
  };
}

/**
 * The route as documented: the scope as its security requirement (OpenAPI's list of roles an API
 * key scheme needs) and the 403 a key without it gets; `scope` itself is no OpenAPI field.
 */
export function documented<R extends ScopedRoute>(route: R): RouteConfig {
  const { scope, ...rest } = route;
  if (!scope) return rest;
  const responses: Json = { ...rest.responses };
  const template = responses[403] ?? responses[401];
  responses[403] = withRefusal(
    responses[403] ?? { ...template, description: 'The key may not do this' },
    scope,
  );
  return { ...rest, responses, security: [{ [API_KEY_SCHEME]: [scope] }] };
}
