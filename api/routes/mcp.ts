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
import { Hono } from 'hono';
import { authorizeResource, type WorkspaceAccess } from '../../db/access.ts';
import type { Principal } from '../../db/api-keys.ts';
import { listDeployedWorkflows } from '../../db/workflows.ts';
import type { ApiDeps, ApiEnv } from '../context.ts';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '../mcp-sdk.ts';
import { mcpToolCaller } from '../mcp-tool-calls.ts';
import { workflowTools } from '../mcp-tools.ts';
import { JSON_BODY_LIMIT_BYTES } from '../middleware/body-limit.ts';
import { uuidParam } from '../middleware/validate.ts';

const SERVER_VERSION = '1.0.0';

export function mcpRoutes(deps: ApiDeps) {
  const { db, log } = deps;
  const callTool = mcpToolCaller(deps);

  /** Tools are named from the deployed workflows every time: any process resolves a name alike. */
  const toolsOf = async (workspaceId: string) => workflowTools(await listDeployedWorkflows(db, workspaceId));

  function mcpServer(access: WorkspaceAccess, principal: Principal, requestId: string): Server {
    const server = new Server(
      { name: 'workflow-service', title: `${access.workspace.name} workflows`, version: SERVER_VERSION },
      {
        capabilities: { tools: { listChanged: false } },
        instructions: `Each tool runs a deployed workflow of the workspace "${access.workspace.name}" and returns its output.`,
      },
    );
    // A handler's unexpected error would reach the client as its message (SQL, paths): log it and
    // answer an internal error that names the request instead.
    const guarded =
      <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await handler(...args);
        } catch (err) {
          if (err instanceof McpError) throw err;
          log.error('mcp handler failed', { requestId, err });
          throw new McpError(ErrorCode.InternalError, `Internal server error (request ${requestId})`);
        }
      };
    server.setRequestHandler(
      ListToolsRequestSchema,
      guarded(async () => ({ tools: (await toolsOf(access.workspace.id)).map((t) => t.tool) })),
    );
    server.setRequestHandler(
      CallToolRequestSchema,
      guarded(async (request) => {
        const { name, arguments: args } = request.params;
        const found = (await toolsOf(access.workspace.id)).find((t) => t.tool.name === name);
        if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
        return callTool({ principal, workflowId: found.workflowId, arguments: args ?? {} });
      }),
    );
    return server;
  }

  return (
    new Hono<ApiEnv>()
      .post('/:workspaceId', async (c) => {
        const workspaceId = uuidParam(c, 'workspaceId');
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
      // Stateless: no stream for server-initiated messages (GET) and no session to end (DELETE).
      // Left to a stateless transport, a GET would open an event stream nothing ever writes to,
      // held open until the client leaves. 405 with a JSON-RPC error (the transport's answer to a
      // method it does not serve) is what the spec offers, and MCP clients go on with POST alone.
      .on(['GET', 'DELETE'], '/:workspaceId', (c) =>
        c.json(
          {
            jsonrpc: '2.0',
            error: { code: -32000, message: 'Method not allowed: send JSON-RPC with POST' },
            id: null,
          },
          405,
          { Allow: 'POST' },
        ),
      )
  );
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
