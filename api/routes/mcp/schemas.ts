// The JSON-RPC 2.0 messages of /api/mcp/{workspaceId}, as documented: the transport (the MCP SDK)
// reads and answers them itself, so these schemas describe rather than validate.
import { z } from 'zod';
import { EX } from '../../openapi/components.ts';

const id = z.union([z.string(), z.number().int()]);

export const rpcRequest = z
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

export const rpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: id.nullable(),
    result: z.record(z.string(), z.unknown()).optional().meta({ description: 'On success' }),
    error: rpcError.optional().meta({ description: 'On failure' }),
  })
  .meta({ id: 'JsonRpcResponse' });

export const workspacePath = z.object({
  workspaceId: z
    .uuid()
    .meta({ description: 'The workspace whose deployed workflows are the tools', example: EX.workspaceId }),
});

export const mcpHeaders = z.object({
  Accept: z.string().meta({
    description: 'Must accept both application/json and text/event-stream (406 otherwise)',
    example: 'application/json, text/event-stream',
  }),
  'MCP-Protocol-Version': z.string().optional().meta({
    description: 'The protocol version agreed at initialize, on later requests',
    example: '2025-06-18',
  }),
});
