// The parts of the MCP TypeScript SDK the API uses, imported in this one place. Deno cannot type
// the SDK's `.js` subpath imports (its package exports map their types to `*.js.d.ts`, SDK issue
// #2701; tsc falls back to typesVersions, Deno does not): `@ts-types` names the declarations.
// Remove the directives once the SDK's exports are fixed.

export { Server } from '@modelcontextprotocol/sdk/server';
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/server/webStandardStreamableHttp.d.ts"
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
