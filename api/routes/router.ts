// The router every public resource builds its endpoints on. One `createRoute` object per operation
// is at once the path, the request validation, the typed answer and the OpenAPI documentation:
// `router.openapi(route, handler)` registers it with @hono/zod-openapi, in front of the guards the
// route calls for.
//
// Requests are validated here rather than by zod-openapi's own validators, for three behaviours
// clients rely on: a JSON body is read whatever its Content-Type (`curl -d` sends form-urlencoded),
// strictly (invalid UTF-8, text Postgres cannot store, and the line and column of a syntax error are
// each a clear 400; an empty body is `{}`); a query parameter given twice is a 400, not a silent
// pick; and path, query and body are judged in that order, the first failing part answering. The
// failures become the same 400 `{error, details}` as the `defaultHook`, which covers any validator
// zod-openapi still runs.
import { OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Context, Handler, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { Principal } from '../../db/api-keys.ts';
import type { ApiEnv } from '../context.ts';
import { invalidRequest, jsonBody, queryParams } from '../middleware/validate.ts';
import { idempotencyHeaders } from '../openapi/components.ts';
import { documented, requireScope, type ScopedRoute } from './scopes.ts';

/** The middleware a route may stand behind, built once per app (each keeps state). */
export interface Guards {
  /** Idempotency-Key: on the routes that document that header. */
  idempotency: MiddlewareHandler<ApiEnv>;
  /** The /api/v1 bucket: on every route of a router made with `rateLimited`. */
  rateLimit: MiddlewareHandler<ApiEnv>;
  /**
   * Sends the read of the caller's access to the workspace a valid request names, for its route's
   * check (db/access.ts readAccessAhead): called before the bucket's take, so that both leave together.
   */
  readAccessAhead?: (principal: Principal, workspaceId: string) => void;
}

// Path parameters reported under another name than their place in the path (`{id}` of a knowledge
// base is `knowledgeBaseId` in a 400), keyed by the parameter's schema.
const reportedNames = new WeakMap<z.ZodType, string>();

/**
 * A path parameter that must be a UUID, documented with its description and example; a 400 names
 * it `reportAs` (the field a client knows it by) when that differs from its name in the path.
 */
export function uuidParam(description: string, example: string, reportAs?: string) {
  const schema = z.uuid({ error: 'Must be a UUID' }).meta({ description, example });
  if (reportAs) reportedNames.set(schema, reportAs);
  return schema;
}

type RequestParts = NonNullable<RouteConfig['request']>;

/** The JSON body schema of a route, if it takes one. */
function bodySchemaOf(request: RequestParts | undefined): z.ZodType | undefined {
  const media = request?.body?.content?.['application/json'];
  const schema = media && 'schema' in media ? media.schema : undefined;
  return schema instanceof z.ZodType ? schema : undefined;
}

/** Validates a request: hands the parsed parts to `c.req.valid()`, answers the workspace it names. */
type Validation = (c: Context<ApiEnv>) => Promise<{ workspaceId?: unknown }>;

/** Validates path, query and body, in that order, and hands the parsed values to `c.req.valid()`. */
function requestValidation(request: RequestParts): Validation | undefined {
  const params = request.params instanceof z.ZodObject ? request.params : undefined;
  const query = request.query instanceof z.ZodType ? request.query : undefined;
  const body = bodySchemaOf(request);
  if (!params && !query && !body) return undefined;
  return async (c) => {
    let named: { workspaceId?: unknown } = {};
    if (params) c.req.addValidatedData('param', pathParams(params, c.req.param()) as object);
    if (query) {
      const values = queryParams(c, query) as object;
      c.req.addValidatedData('query', values);
      named = values;
    }
    if (body) {
      const values = (await jsonBody(c, body)) as object;
      c.req.addValidatedData('json', values);
      if (named.workspaceId === undefined) named = values;
    }
    return named;
  };
}

/**
 * A rate-limited route's validation, split around the bucket's take: the request is validated
 * first, and a valid one's workspace access read sent (Guards.readAccessAhead) in the same turn of
 * the event loop as the take, both on the lane (db/client.ts onLane); a refusal is kept and answered
 * after the take, where clients have always met it (an invalid request takes its token).
 */
function validatedAroundTake(
  validate: Validation,
  readAhead: Guards['readAccessAhead'],
): [MiddlewareHandler<ApiEnv>, MiddlewareHandler<ApiEnv>] {
  const refusals = new WeakMap<Context<ApiEnv>, { error: unknown }>();
  return [
    async (c, next) => {
      let named: { workspaceId?: unknown } = {};
      try {
        named = await validate(c);
      } catch (error) {
        refusals.set(c, { error });
      }
      // Routes without a key (inbound webhooks) have no principal, and no workspace access to read.
      const principal = c.get('principal') as Principal | undefined;
      if (readAhead && principal && typeof named.workspaceId === 'string')
        readAhead(principal, named.workspaceId);
      await next();
    },
    async (c, next) => {
      const refused = refusals.get(c);
      if (refused) throw refused.error;
      await next();
    },
  ];
}

function pathParams(schema: z.ZodObject, values: Record<string, string>): unknown {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  // One parameter at a time, as a reader fixes them: the first in the path that is wrong.
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const name = String(issue.path[0]);
  const field = schema.shape[name] as z.ZodType | undefined;
  const reported = (field && reportedNames.get(field)) ?? name;
  const rest = issue.path.slice(1).map((p) => (typeof p === 'number' ? p : String(p)));
  throw invalidRequest('param', [{ code: issue.code, path: [reported, ...rest], message: issue.message }]);
}

/** True when the route's headers are `idempotencyHeaders`, or extend it (execute's X-Execution-Mode). */
function documentsIdempotencyKey(route: RouteConfig): boolean {
  const headers = route.request?.headers;
  return (
    headers instanceof z.ZodObject &&
    headers.shape['Idempotency-Key'] === idempotencyHeaders.shape['Idempotency-Key']
  );
}

/** zod-openapi's hook for any validation it runs itself: the same 400 as ours. */
const defaultHook = (result: { success: boolean; target: string; error?: z.ZodError }) => {
  if (!result.success && result.error) throw invalidRequest(result.target, result.error);
};

/** A documented path in Hono's form: `/a/{id}` is `/a/:id`, so a plain handler's params are typed. */
type RoutingPath<P extends string> = P extends `${infer Head}/{${infer Name}}${infer Tail}`
  ? `${Head}/:${Name}${RoutingPath<Tail>}`
  : P;

export class Router {
  readonly app = new OpenAPIHono<ApiEnv>({ defaultHook });
  readonly #guards: Guards;
  readonly #rateLimited: boolean;

  constructor(guards: Guards, options: { rateLimited: boolean }) {
    this.#guards = guards;
    this.#rateLimited = options.rateLimited;
  }

  /**
   * The guards in front of a route: its scope first (api/routes/scopes.ts), then idempotency, so
   * a replay takes no rate-limit token.
   */
  #guardsOf(route: ScopedRoute): MiddlewareHandler<ApiEnv>[] {
    return [
      ...(route.scope ? [requireScope(route.scope)] : []),
      ...(documentsIdempotencyKey(route) ? [this.#guards.idempotency] : []),
      ...(this.#rateLimited ? [this.#guards.rateLimit] : []),
    ];
  }

  /** The guards of an operation and its validation: around the take when rate-limited (validatedAroundTake). */
  #validatedGuardsOf(route: ScopedRoute): MiddlewareHandler<ApiEnv>[] {
    const validate = route.request ? requestValidation(route.request) : undefined;
    const guards = this.#guardsOf(route);
    if (!validate) return guards;
    if (!this.#rateLimited) {
      return [
        ...guards,
        async (c, next) => {
          await validate(c);
          await next();
        },
      ];
    }
    const [validating, answering] = validatedAroundTake(validate, this.#guards.readAccessAhead);
    // The bucket is the last guard (#guardsOf): the validation goes just before it, its refusal just after.
    return [...guards.slice(0, -1), validating, ...guards.slice(-1), answering];
  }

  /** An operation: documented, guarded, validated, and answered by a handler typed by its route. */
  openapi<R extends ScopedRoute>(route: R, handler: RouteHandler<R, ApiEnv>): this {
    this.app.openAPIRegistry.registerPath(documented(route));
    const middleware = this.#validatedGuardsOf(route);
    // zod-openapi registers the handler; the document already holds the route, and the request
    // parts are validated above, so the copy it gets is hidden and has none.
    const { request: _validatedAbove, scope: _guardedAbove, ...rest } = route;
    this.app.openapi({ ...rest, hide: true, middleware } as unknown as R, handler);
    return this;
  }

  /**
   * An operation that reads its own request: a multipart upload streamed as it arrives, an inbound
   * webhook of any media type, a JSON-RPC exchange. Documented by its route and guarded like the
   * others; its handler is a plain Hono handler.
   */
  plain<R extends ScopedRoute>(route: R, handler: Handler<ApiEnv, RoutingPath<R['path']>>): this {
    this.app.openAPIRegistry.registerPath(documented(route));
    const path = route.path.replaceAll(/\/{(.+?)}/g, '/:$1');
    this.app.on([route.method.toUpperCase()], [path], ...this.#guardsOf(route), handler);
    return this;
  }
}
