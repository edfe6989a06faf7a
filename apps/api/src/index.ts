export { buildApp, API_PREFIX, type BuildAppOptions } from './app.ts';
export { clientAddress, type RateLimitOptions } from './plugins/rate-limits.ts';
export { loadConfig, ConfigError, EXAMPLE_EXECUTORS_FILE, type ServiceConfig } from './config.ts';
export { openServices, type AppServices, type OpenServices } from './services/index.ts';
export { renderOpenApi, OPENAPI_FILE } from './openapi.ts';
export { Authenticator, NO_AUTH, authorize, type AuthConfig, type AuthMode } from './auth/authenticator.ts';
export { ApiKeyVerifier, hashApiKey, newApiKey } from './auth/api-keys.ts';
export { SCOPES, type Scope } from './auth/scopes.ts';
export { assertSafeBinding } from './config.ts';
