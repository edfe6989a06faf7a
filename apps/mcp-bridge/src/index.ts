/** The bridge as a library (tests, embedding): build a server over a REST client, or serve HTTP. */
export { createApiClient, ApiError, ApiUnavailableError, type ApiClient } from './api-client.ts';
export { parseConfig, ConfigError, type BridgeConfig, type Surface } from './config.ts';
export { buildServer, selectTools, callTool, BRIDGE_VERSION } from './server.ts';
export { startHttp, type HttpBridge } from './http.ts';
export { annotationsOf, type AnyTool, type Tool, type ToolKind } from './tool.ts';
export { SEMANTIC_TOOLS, ORCHESTRATOR_TOOLS } from './tools/index.ts';
