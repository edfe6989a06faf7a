/** Public API of the executors: the registry, its configuration types, and the executor contracts. */
export { ExecutorError, isRetryable } from './types.ts';
export type { Executor, ExecutorCall, ExecutorDescription, ExecutorDetails, ExecutorRegistry } from './types.ts';
export { DEFAULT_REGISTRY_FILE, REGISTRY_FILE_ENV, createExecutorRegistry, loadExecutorRegistry } from './registry.ts';
export type { CreateRegistryOptions, LoadRegistryOptions, RegistryOptions } from './registry.ts';
export { BUILTIN_KEYS, DEFAULT_MCP_TIMEOUT_MS, RegistryConfigError } from './registry-config.ts';
export { DEFAULT_TIMEOUT_SECONDS } from './kind.ts';
export type { ExecutorKind } from './kind.ts';
export { EXECUTOR_KINDS } from './kinds.ts';
export { HTTP_METHODS } from './http/http.ts';
export type {
  A2aExecutorConfig,
  BuiltinExecutorConfig,
  ExecutorConfig,
  HttpExecutorConfig,
  HttpServerConfig,
  McpExecutorConfig,
  McpServerConfig,
  RegistryConfig,
  StdioServerConfig,
} from './registry-config.ts';
export { BUILTIN_NAMES } from './builtin/builtin.ts';
export type { BuiltinName, EchoOutput } from './builtin/builtin.ts';
export type { ExecutorLogger } from './shared/logger.ts';
export { DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_CONCURRENT_CALLS_PER_ORIGIN } from './shared/call-limiter.ts';
export { AnswerTooLargeError, answerReadLimit } from './shared/answer-limit.ts';
