// Examples of /api/mcp/{workspaceId}: the messages a client sends and the answers it gets.
import { EX } from '../../openapi/components.ts';

/** The transport's refusal of a request it cannot take: a JSON-RPC error without an id. */
export const rpcErrorAnswer = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
});

/** initialize, tools/list and tools/call, as a client sends them. */
export const requestExamples = {
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
};

/** Their answers, and the answer to an unknown tool. */
export const answerExamples = {
  initialize: {
    summary: 'initialize',
    value: {
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'workflow-service', title: 'Main workflows', version: '1.0.0' },
        instructions: 'Each tool runs a deployed workflow of the workspace "Main" and returns its output.',
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
};
