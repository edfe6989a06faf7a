/**
 * Graceful shutdown of the server process (issue #20 item 4), in this order:
 * 1. the engine stops claiming runs (no trigger, wake-up or recovery scan starts one any more),
 *    and the schedule loop stops firing ticks (a pass in flight finishes);
 * 2. at the same time, the app stops listening and ends its open event streams (their `preClose`
 *    hook; clients resume with `Last-Event-ID`), answers 503 to requests on kept-alive
 *    connections and waits for requests in flight; and the engine lets executing nodes finish
 *    within the grace, aborts the rest and releases every lease (`RunEngine.close`);
 * 3. the services close (sweepers, engine, executors, store: each step runs even when one fails),
 *    then the tracer exports the spans it still buffers (when tracing is on; at most
 *    {@link TRACING_FLUSH_MS}, and a failed export does not make the shutdown unclean);
 * 4. the process exits: 0 when everything closed, 1 when something failed, and 1 from a timer
 *    `graceMs + SHUTDOWN_MARGIN_MS` after the signal whatever still hangs.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from '@switchyard/runner';
import type { OpenServices } from './services/index.ts';

/** Time past the grace that closing may take before the process is ended anyway, ms. */
export const SHUTDOWN_MARGIN_MS = 5_000;

/** Longest wait for the tracer to export its last spans at shutdown, ms. */
export const TRACING_FLUSH_MS = 2_000;

/** How `promise` settled within `ms`: `ok`, its rejection, or `timeout`. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<'ok' | 'timeout' | { error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([promise.then(() => 'ok' as const, (error: unknown) => ({ error })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ShutdownDeps {
  app: Pick<FastifyInstance, 'close'>;
  services: Pick<OpenServices, 'engine' | 'close'> & Partial<Pick<OpenServices, 'scheduleLoop'>>;
  logger: Logger;
  /** How long executing nodes may finish, ms (`SWITCHYARD_SHUTDOWN_GRACE_MS`). */
  graceMs: number;
  /** The tracer provider when tracing is on (telemetry/tracing.ts): shut down last, which exports buffered spans. */
  tracing?: { shutdown(): Promise<void> } | null;
  /** Ends the process (default `process.exit`). */
  exit?: (code: number) => void;
}

/**
 * Returns the shutdown procedure for `signal` (see the module comment); it runs once: later
 * calls return the first call's promise. Never rejects.
 */
export function gracefulShutdown(deps: ShutdownDeps): (signal: string) => Promise<void> {
  const { app, services, logger, graceMs } = deps;
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;
  const run = async (signal: string): Promise<void> => {
    logger.info({ signal, graceMs }, 'shutting down');
    // Whatever hangs (a close that never returns, an executor that ignores its abort), the process ends.
    setTimeout(() => {
      logger.error({ afterMs: graceMs + SHUTDOWN_MARGIN_MS }, 'shutdown did not finish in time; exiting');
      exit(1);
    }, graceMs + SHUTDOWN_MARGIN_MS).unref();
    services.engine.stopClaiming();
    let failed = false;
    const steps = await Promise.allSettled([app.close(), services.engine.close({ graceMs }), services.scheduleLoop?.stop()]);
    for (const step of steps) {
      if (step.status === 'rejected') {
        failed = true;
        logger.error({ err: step.reason }, 'shutdown step failed');
      }
    }
    try {
      await services.close();
    } catch {
      failed = true; // each failure is logged by services.close()
    }
    // The last spans are worth a short wait, not the exit timer: a collector that does not answer
    // loses them (the leases are already released), and the shutdown still counts as clean.
    if (deps.tracing) {
      const flushed = await settledWithin(deps.tracing.shutdown(), TRACING_FLUSH_MS);
      if (flushed === 'timeout') logger.warn({ afterMs: TRACING_FLUSH_MS }, 'the last spans were not exported in time; exiting without them');
      else if (flushed !== 'ok') logger.warn({ err: flushed.error }, 'exporting the last spans failed');
    }
    logger.info({ signal, clean: !failed }, 'shut down');
    exit(failed ? 1 : 0);
  };
  return (signal) => (running ??= run(signal));
}
