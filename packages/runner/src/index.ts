export * from './cel/index.ts';
export * from './executors/index.ts';
export { backoffDelayMs } from './backoff.ts';
export { systemClock, type Clock } from './clock.ts';
export { LoopClock, type LoopStatus } from './loop-status.ts';
export { definitionChecks } from './definition-checks.ts';
export { DEFAULT_MAX_ACTIVE_RUNS, RunEngine, type RunEngineOptions } from './engine.ts';
export { Interpreter, NodeFailedError, type InterpreterDeps } from './interpreter.ts';
export {
  HmacTokenMinter,
  downstreamAuthorization,
  type DownstreamIdentity,
  type DownstreamTokenContext,
  type DownstreamTokenMinter,
  type HmacTokenMinterOptions,
} from './downstream-token.ts';
export { DEFAULT_MAX_OUTPUT_BYTES } from './output-limit.ts';
export { RunLedger } from './ledger.ts';
export { TimeoutSweeper, type TimeoutSweeperOptions } from './sweeper.ts';
export { ScheduleLoop, nextTickAfter, type FireOutcome, type FireTick, type ScheduleLoopOptions } from './schedule-loop.ts';
export { RetentionSweeper, deleteEndedRun, type RetentionSweeperOptions, type RunDeletion } from './retention.ts';
export { recordDecision, type DecisionDeps } from './decisions.ts';
export { appendReported } from './recorded-events.ts';
export { requestDirective, type DirectiveDeps, type DirectiveRequest, type DirectiveResult } from './directives.ts';
export { ExecutionStopped, stopEffect, type StopReason } from './stop-reason.ts';
export { GateBlocked, RunCancelled } from './gates.ts';
export type { Logger } from './logger.ts';
export { TRACER_NAME, TRACE_ATTRIBUTES, traceContextFromHeaders, type StoredTraceContext } from './tracing.ts';
export { ADDRESS_PLACEHOLDER, DATA_DIR_PLACEHOLDER, publicErrorText, type PublicTextOptions } from './public-text.ts';
export { EventLoopSlice, sharedSlice } from './event-loop-slice.ts';
