export { buildApp, API_PREFIX, type BuildAppOptions } from './app.ts';
export { clientAddress, type RateLimitOptions } from './plugins/rate-limits.ts';
export { loadConfig, EXAMPLE_EXECUTORS_FILE, type ServiceConfig } from './config.ts';
export { openServices, type AppServices, type OpenServices } from './services/index.ts';
export { renderOpenApi, OPENAPI_FILE } from './openapi.ts';
