/** The bridge as a library (tests, embedding): build a server over a REST client, or serve HTTP. */
export { createApiClient, createApiClientPool, ApiError, ApiUnavailableError, type ApiClient, type ApiClientPool } from './api-client.ts';
export { parseConfig, isLoopback, ConfigError, HTTP_AUTH_MODES, type BridgeConfig, type HttpConfig, type HttpAuthMode, type Surface } from './config.ts';
export { buildServer, selectTools, callTool, BRIDGE_VERSION } from './server.ts';
export { startHttp, type HttpBridge, type HttpDeps } from './http.ts';
export { createHttpAuthenticator, challengeOf, apiNeedsCredential, createCredentialRequirementCheck, bearerModeUsable, type HttpAuthenticator } from './http-auth.ts';
export { checkHostAndOrigin, defaultAllowedHosts, defaultAllowedOrigins, hostKey, originKey } from './http-guard.ts';
export { annotationsOf, type AnyTool, type Tool, type ToolKind } from './tool.ts';
export { SEMANTIC_TOOLS, ORCHESTRATOR_TOOLS } from './tools/index.ts';
