/**
 * Test support for the MCP bridge: the bridge's clients (in-memory, stdio, Streamable HTTP), whose
 * REST calls go to a real API started with ./service.ts. They live in the bridge package's
 * testing module, shared with the benches (apps/mcp-bridge/src/testing/bridge-clients.ts).
 */
export * from '@switchyard/mcp-bridge/testing/bridge-clients';
