// A stdio MCP server for tests of answer limits: tool `text({ bytes })` answers a text block of
// `bytes` 'x' characters. Plain JavaScript, so that it runs with `node` alone.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'big-answer', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'text', inputSchema: { type: 'object', properties: { bytes: { type: 'number' } }, required: ['bytes'] } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: 'text', text: 'x'.repeat(Number(request.params.arguments?.bytes ?? 0)) }],
}));
await server.connect(new StdioServerTransport());
