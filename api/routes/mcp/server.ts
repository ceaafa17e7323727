// The MCP server of one request: the workspace's deployed workflows as tools, each call a sync run
// of the deployed version. A fresh server per POST (see routes.ts: the API is stateless).
import type { WorkspaceAccess } from '../../../db/access.ts';
import type { Principal } from '../../../db/api-keys.ts';
import { listDeployedWorkflows } from '../../../db/workflow-deployments.ts';
import type { ApiDeps } from '../../context.ts';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, Server } from './sdk.ts';
import { mcpToolCaller } from './tool-calls.ts';
import { workflowTools } from './tools.ts';

const SERVER_VERSION = '1.0.0';

/** Builds the MCP server of a request to a workspace the caller may read. */
export function mcpServers(deps: ApiDeps) {
  const { db, log } = deps;
  const callTool = mcpToolCaller(deps);

  /** Tools are named from the deployed workflows every time: any process resolves a name alike. */
  const toolsOf = async (workspaceId: string) => workflowTools(await listDeployedWorkflows(db, workspaceId));

  return function mcpServer(access: WorkspaceAccess, principal: Principal, requestId: string): Server {
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
  };
}
