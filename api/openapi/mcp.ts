// OpenAPI: /api/mcp/{workspaceId}, a workspace's deployed workflows as an MCP server over
// Streamable HTTP (stateless: JSON-RPC 2.0 over POST, answered with JSON; no session, no stream).
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { EX, errorBody, errors, invalid, ok, REQUEST_ID } from './components.ts';

const id = z.union([z.string(), z.number().int()]);

const rpcRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: id.optional().meta({ description: 'Absent on a notification (answered 202, no body)' }),
    method: z
      .string()
      .meta({ description: 'initialize, tools/list, tools/call, ping, notifications/initialized…' }),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcRequest' });

const rpcError = z.object({
  code: z
    .number()
    .int()
    .meta({ description: 'JSON-RPC error code, e.g. -32700 parse error, -32602 invalid params' }),
  message: z.string(),
  data: z.unknown().optional(),
});

const rpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: id.nullable(),
    result: z.record(z.string(), z.unknown()).optional().meta({ description: 'On success' }),
    error: rpcError.optional().meta({ description: 'On failure' }),
  })
  .meta({ id: 'JsonRpcResponse' });

const workspacePath = z.object({
  workspaceId: z
    .uuid()
    .meta({ description: 'The workspace whose deployed workflows are the tools', example: EX.workspaceId }),
});

const mcpHeaders = z.object({
  Accept: z.string().meta({
    description: 'Must accept both application/json and text/event-stream (406 otherwise)',
    example: 'application/json, text/event-stream',
  }),
  'MCP-Protocol-Version': z.string().optional().meta({
    description: 'The protocol version agreed at initialize, on later requests',
    example: '2025-06-18',
  }),
});

/** The transport's refusal of a request it cannot take: a JSON-RPC error without an id. */
const rpcErrorAnswer = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
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

export function registerMcp(registry: OpenAPIRegistry) {
  const tags = ['MCP'];
  registry.registerPath({
    method: 'post',
    path: '/api/mcp/{workspaceId}',
    operationId: 'mcpMessage',
    tags,
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
            examples: {
              initialize: {
                summary: 'initialize',
                value: {
                  jsonrpc: '2.0',
                  id: 1,
                  method: 'initialize',
                  params: {
                    protocolVersion: '2025-06-18',
                    capabilities: {},
                    clientInfo: { name: 'curl', version: '1' },
                  },
                },
              },
              list: { summary: 'tools/list', value: { jsonrpc: '2.0', id: 2, method: 'tools/list' } },
              call: {
                summary: 'tools/call',
                value: {
                  jsonrpc: '2.0',
                  id: 3,
                  method: 'tools/call',
                  params: { name: 'greet-person', arguments: { name: 'Ada' } },
                },
              },
            },
          },
        },
      },
    },
    responses: {
      200: ok(
        {
          description: 'The JSON-RPC answer(s): one per request in the body',
          schema: z.union([rpcResponse, z.array(rpcResponse)]),
          examples: {
            initialize: {
              summary: 'initialize',
              value: {
                jsonrpc: '2.0',
                id: 1,
                result: {
                  protocolVersion: '2025-06-18',
                  capabilities: { tools: { listChanged: false } },
                  serverInfo: { name: 'workflow-service', title: 'Main workflows', version: '1.0.0' },
                  instructions:
                    'Each tool runs a deployed workflow of the workspace "Main" and returns its output.',
                },
              },
            },
            list: {
              summary: 'tools/list',
              value: {
                jsonrpc: '2.0',
                id: 2,
                result: {
                  tools: [
                    {
                      name: 'greet-person',
                      title: 'Greet person',
                      description: 'Says hello to someone',
                      inputSchema: {
                        type: 'object',
                        properties: { name: { type: 'string' } },
                        required: ['name'],
                      },
                    },
                  ],
                },
              },
            },
            call: {
              summary: 'tools/call',
              value: {
                jsonrpc: '2.0',
                id: 3,
                result: {
                  content: [{ type: 'text', text: '{"message":"Hello, Ada!"}' }],
                  structuredContent: { message: 'Hello, Ada!' },
                  _meta: { executionId: EX.executionId },
                },
              },
            },
            unknownTool: {
              summary: 'An unknown tool',
              value: {
                jsonrpc: '2.0',
                id: 3,
                error: { code: -32602, message: 'MCP error -32602: Unknown tool: nope' },
              },
            },
          },
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

  for (const method of ['get', 'delete'] as const) {
    registry.registerPath({
      method,
      path: '/api/mcp/{workspaceId}',
      operationId: method === 'get' ? 'mcpOpenStream' : 'mcpEndSession',
      tags,
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
  }
}
