export * from './cel/index.ts';
export * from './executors/index.ts';
export { backoffDelayMs } from './backoff.ts';
export { systemClock, type Clock } from './clock.ts';
export { definitionChecks } from './definition-checks.ts';
export { RunEngine, type RunEngineOptions } from './engine.ts';
export { Interpreter, NodeFailedError, type InterpreterDeps } from './interpreter.ts';
export { RunLedger } from './ledger.ts';
export type { Logger } from './logger.ts';
