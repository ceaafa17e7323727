// /api/mcp/{workspaceId}: the workspace's deployed workflows as an MCP server over Streamable HTTP
// (JSON-RPC over POST; the X-API-Key middleware authenticates it like every /api route). Each
// deployed workflow is a tool; calling it runs the deployed version as a sync execute does.
//
// Stateless: every POST gets a fresh MCP server and transport, with no session id, and answers
// with plain JSON. Nothing about a client lives in one API process, so any number of processes
// behind a load balancer serve the same client without sticky sessions, and a restart loses
// nothing. The price is that the server cannot push notifications (no GET stream, no listChanged):
// clients list the tools again when they want a fresh view. A tool call holds its POST open until
// the workflow finishes, as a sync execute does.
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import { authorizeResource } from '../../../db/access.ts';
import type { ApiDeps, ApiEnv } from '../../context.ts';
import { JSON_BODY_LIMIT_BYTES } from '../../middleware/body-limit.ts';
import { uuidFromPath } from '../../middleware/validate.ts';
import { ok, REQUEST_ID } from '../../openapi/components.ts';
import { errorBody, errors, invalid } from '../../openapi/error-answers.ts';
import { type Guards, Router } from '../router.ts';
import { answerExamples, requestExamples, rpcErrorAnswer } from './examples.ts';
import { mcpHeaders, rpcRequest, rpcResponse, workspacePath } from './schemas.ts';
import { WebStandardStreamableHTTPServerTransport } from './sdk.ts';
import { mcpServers } from './server.ts';

// The transport reads and answers the JSON-RPC itself: every operation here is a plain handler,
// documented by its route. (GET and DELETE answer 405 whatever the path holds, as before.)
export const mcpMessageRoute = createRoute({
  method: 'post',
  path: '/api/mcp/{workspaceId}',
  operationId: 'mcpMessage',
  scope: 'workflows:execute' as const,
  tags: ['MCP'],
  summary: 'Send MCP messages',
  description:
    'MCP over Streamable HTTP. Each deployed workflow of the workspace is a tool (named from the ' +
    "workflow's name, its declared inputs as the input schema); `tools/call` runs the deployed version " +
    'as a sync execute does and holds the request until it finishes. Stateless: no Mcp-Session-Id, any ' +
    'API process answers any request. A workflow failure is a tool result with `isError: true`.',
  request: {
    params: workspacePath,
    headers: mcpHeaders,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.union([rpcRequest, z.array(rpcRequest)]),
          examples: requestExamples,
        },
      },
    },
  },
  responses: {
    200: ok(
      {
        description: 'The JSON-RPC answer(s): one per request in the body',
        schema: z.union([rpcResponse, z.array(rpcResponse)]),
        examples: answerExamples,
      },
      'none',
    ),
    202: {
      description: 'Only notifications or responses were sent: accepted, no body',
      headers: REQUEST_ID,
    },
    400: {
      description: 'Not JSON-RPC, or the workspace id is not a UUID',
      headers: REQUEST_ID,
      content: {
        'application/json': {
          schema: z.union([rpcResponse, errorBody]),
          examples: {
            parse: { summary: 'Not JSON', value: rpcErrorAnswer(-32700, 'Parse error: Invalid JSON') },
            invalid: {
              summary: 'Not a JSON-RPC message',
              value: rpcErrorAnswer(-32700, 'Parse error: Invalid JSON-RPC message'),
            },
            workspaceId: {
              summary: 'Bad workspace id',
              value: invalid(['workspaceId'], 'Must be a UUID', 'invalid_format'),
            },
          },
        },
      },
    },
    406: {
      description: 'The Accept header does not take both application/json and text/event-stream',
      headers: REQUEST_ID,
      content: {
        'application/json': {
          schema: rpcResponse,
          example: rpcErrorAnswer(
            -32000,
            'Not Acceptable: Client must accept both application/json and text/event-stream',
          ),
        },
      },
    },
    415: {
      description: 'Content-Type is not application/json',
      headers: REQUEST_ID,
      content: {
        'application/json': {
          schema: rpcResponse,
          example: rpcErrorAnswer(-32000, 'Unsupported Media Type: Content-Type must be application/json'),
        },
      },
    },
    ...errors(
      {
        403: 'Personal API keys are disabled in this workspace; use a workspace key',
        404: 'Workspace not found',
        413: 'Request body over 10485760 bytes',
      },
      { metering: 'none' },
    ),
  },
});

const notServed = (method: 'get' | 'delete') =>
  createRoute({
    method,
    path: '/api/mcp/{workspaceId}',
    operationId: method === 'get' ? 'mcpOpenStream' : 'mcpEndSession',
    scope: 'workflows:execute' as const,
    tags: ['MCP'],
    summary: method === 'get' ? 'Open an MCP event stream (not served)' : 'End an MCP session (not served)',
    description:
      'Part of Streamable HTTP for stateful servers. This server is stateless: always 405 with a JSON-RPC ' +
      'error; MCP clients go on with POST alone.',
    request: { params: workspacePath },
    responses: {
      405: notAllowed,
      ...errors({}, { metering: 'none' }),
    },
  });

const notAllowed = {
  description: 'Stateless server: no event stream to open (GET) and no session to end (DELETE); use POST',
  headers: {
    ...REQUEST_ID,
    Allow: { description: 'The methods served', schema: { type: 'string' as const, example: 'POST' } },
  },
  content: {
    'application/json': {
      schema: rpcResponse,
      example: rpcErrorAnswer(-32000, 'Method not allowed: send JSON-RPC with POST'),
    },
  },
};

export function mcpRoutes(deps: ApiDeps, guards: Guards) {
  const { db } = deps;
  const mcpServer = mcpServers(deps);
  // Stateless: no stream for server-initiated messages (GET) and no session to end (DELETE).
  // Left to a stateless transport, a GET would open an event stream nothing ever writes to,
  // held open until the client leaves. 405 with a JSON-RPC error (the transport's answer to a
  // method it does not serve) is what the spec offers, and MCP clients go on with POST alone.
  const refuse = (c: Context<ApiEnv>) =>
    c.json(rpcErrorAnswer(-32000, 'Method not allowed: send JSON-RPC with POST'), 405, { Allow: 'POST' });
  return new Router(guards, { rateLimited: false })
    .plain(mcpMessageRoute, async (c) => {
      const workspaceId = uuidFromPath(c, 'workspaceId');
      const principal = c.get('principal');
      // A key that cannot act in the workspace learns nothing of it: 404, as for a missing one.
      const access = await authorizeResource(db, principal, workspaceId, 'read', 'Workspace');
      // An empty batch is an invalid request (JSON-RPC 2.0, section 6); the transport would
      // accept it with a bodiless 202. Read from a clone, so the transport still gets the body.
      if (await isEmptyBatch(c.req.raw.clone())) {
        return c.json(
          { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: empty batch' }, id: null },
          400,
        );
      }
      const server = mcpServer(access, principal, c.get('requestId'));
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: JSON_BODY_LIMIT_BYTES,
      });
      await server.connect(transport);
      try {
        // With JSON responses this resolves once every request in the body has its answer.
        const res = await transport.handleRequest(c.req.raw);
        // Through the context, so the headers middleware set (X-Request-Id) are kept.
        return c.newResponse(res.body, res);
      } finally {
        await server.close();
      }
    })
    .plain(notServed('get'), refuse)
    .plain(notServed('delete'), refuse).app;
}

/** True when the body is a JSON array with nothing in it. */
async function isEmptyBatch(req: Request): Promise<boolean> {
  const text = await req.text();
  if (!text.trimStart().startsWith('[')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.length === 0;
  } catch {
    return false;
  }
}
