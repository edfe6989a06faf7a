/**
 * Carrying out run directives (pause, resume, cancel, and the run timeout): the one path the API
 * and the timeout sweeper share (issue "Run control" item 1; spec "Internal Data Flow — Control
 * Endpoints" 3.1). {@link planDirective} picks how; every change is a compare-and-set on the run's
 * status and pending directive, retried on a fresh read when another change came first, so
 * concurrent directives converge on one consistent state.
 */
import { ConflictError, type Actor, cancelSummary, planDirective, timeoutSummary, type DirectiveKind, type RunRecord, type TypedRunEvent } from '@switchyard/domain';
import type { Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';
import type { RunEngine } from './engine.ts';
import type { Logger } from './logger.ts';
import { directiveStop } from './stop-reason.ts';
import { appendReported } from './recorded-events.ts';

export interface DirectiveDeps {
  repos: Repositories;
  clock: Clock;
  /** This instance's engine: signals an execution it runs, starts a resumed run. */
  engine: Pick<RunEngine, 'signal' | 'start'>;
  logger?: Logger;
}

/** A directive to carry out. */
export interface DirectiveRequest {
  directive: DirectiveKind;
  /** Who asks: the caller's actor (issue #18), `TIMEOUT_ACTOR` for the sweeper. Stored as the run's `cancelledBy` for a cancel. */
  requestedBy: Actor;
  /** Why (cancel's optional `reason`). */
  reason?: string | null;
}

/** What became of a directive: the run after it, whether anything changed, and a sentence for the caller. */
export interface DirectiveResult {
  run: RunRecord;
  changed: boolean;
  message: string;
}

/** How long a cancel waits for an execution in this instance to end before answering, ms. */
const CANCEL_SETTLE_MS = 2_000;

/** Rounds of re-reading when other changes keep winning the compare-and-set. */
const MAX_ROUNDS = 20;

/**
 * Carries out `request` on `runId`. Returns null when the run does not exist. Throws
 * ConflictError (409, `details.currentStatus`) when the run's state does not allow the directive;
 * a directive that already holds is no error (`changed: false`).
 */
export async function requestDirective(deps: DirectiveDeps, runId: string, request: DirectiveRequest): Promise<DirectiveResult | null> {
  const { repos, clock } = deps;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const run = await repos.runs.get(runId);
    if (!run) return null;
    const pending = run.pendingDirective ?? null;
    const plan = planDirective(request.directive, run.status, pending);
    const now = clock.now();
    switch (plan.kind) {
      case 'noop':
        return { run, changed: false, message: plan.message };
      case 'conflict':
        throw new ConflictError(plan.message, { currentStatus: run.status, pendingDirective: pending });
      case 'apply': {
        const applied = await applyToIdleRun(deps, run, request, now);
        if (applied) return applied;
        continue;
      }
      case 'signal': {
        const cancel = { cancelReason: cancelReasonOf(request, run), cancelledBy: request.requestedBy };
        const updated = await repos.runs.setDirective(runId, pending, plan.pending, now, plan.pending === 'pause' ? undefined : cancel);
        if (!updated) continue;
        await recordEvent(deps, run, request, now);
        const stopping = deps.engine.signal(runId, directiveStop(updated)!);
        if (plan.pending === 'pause') {
          return { run: updated, changed: true, message: 'Pause requested: no node starts from now on; the run becomes paused once its executing nodes have finished' };
        }
        // A cancel in this instance ends in moments (in-flight calls are aborted): answer with the outcome.
        if (stopping) await settleWithin(stopping, CANCEL_SETTLE_MS, clock);
        const after = (await repos.runs.get(runId)) ?? updated;
        const ended = after.status !== 'running';
        return { run: after, changed: true, message: ended ? `Run ${after.status}` : 'Cancel requested: in-flight calls are being aborted; the run ends in a moment' };
      }
      case 'withdraw_pause': {
        const updated = await repos.runs.setDirective(runId, 'pause', null, now);
        if (!updated) continue;
        await recordEvent(deps, run, request, now);
        deps.engine.signal(runId, 'resume');
        return { run: updated, changed: true, message: 'The pause had not taken effect yet and was withdrawn: the run goes on' };
      }
    }
  }
  throw new ConflictError('The run changed too often while the directive was being applied; try again', { directive: request.directive });
}

/** Waits for `done` at most `ms` milliseconds (the timer is cleared as soon as `done` settles). */
async function settleWithin(done: Promise<void>, ms: number, clock: Clock): Promise<void> {
  const timer = new AbortController();
  try {
    await Promise.race([done, clock.sleep(ms, timer.signal).catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}

/** Applies a directive to a run no runner executes; null when its status moved meanwhile (the caller reads again). */
async function applyToIdleRun(deps: DirectiveDeps, run: RunRecord, request: DirectiveRequest, now: Date): Promise<DirectiveResult | null> {
  const { repos } = deps;
  switch (request.directive) {
    case 'pause': {
      const paused = await repos.runs.pauseUnowned(run.id, run.status, now);
      if (!paused) return null;
      await recordEvent(deps, run, request, now, { type: 'run.paused', payload: {} });
      return { run: paused, changed: true, message: 'Run paused' };
    }
    case 'resume': {
      const resumed = await repos.runs.resumePaused(run.id, now);
      if (!resumed) return null;
      await recordEvent(deps, run, request, now);
      void deps.engine.start(run.id);
      return { run: resumed, changed: true, message: 'Run resumed: it continues where it stopped (nothing completed runs again)' };
    }
    case 'cancel':
    case 'timeout': {
      const outcome =
        request.directive === 'timeout'
          ? ({ status: 'failed', errorSummary: timeoutSummary(run.timeoutSeconds ?? null) } as const)
          : ({ status: 'cancelled', errorSummary: cancelSummary(request.requestedBy, request.reason ?? null) } as const);
      const ended = await repos.runs.endUnowned(run.id, run.status, outcome, { cancelReason: cancelReasonOf(request, run), cancelledBy: request.requestedBy }, now);
      if (!ended) return null;
      await repos.nodeRuns.cancelUnfinished(run.id, `run ${outcome.status}`, now);
      await recordEvent(deps, run, request, now, { type: `run.${outcome.status}`, payload: { errorSummary: outcome.errorSummary } });
      return { run: ended, changed: true, message: `Run ${outcome.status}` };
    }
  }
}

/** The stored cancel reason: the caller's, or the timeout's. */
function cancelReasonOf(request: DirectiveRequest, run: RunRecord): string | null {
  if (request.directive === 'timeout') return `timed out after ${run.timeoutSeconds ?? '?'} s`;
  return request.reason ?? null;
}

/**
 * Appends `directive.received` (or `run.timed_out`) and, when the directive changed the status
 * itself, the status event — best effort: the directive is stored, an event lost to a store
 * hiccup is logged.
 */
async function recordEvent(deps: DirectiveDeps, run: RunRecord, request: DirectiveRequest, now: Date, then?: TypedRunEvent): Promise<void> {
  const first: TypedRunEvent =
    request.directive === 'timeout'
      ? { type: 'run.timed_out', payload: { timeoutSeconds: run.timeoutSeconds ?? null, deadlineAt: run.deadlineAt?.toISOString() ?? null } }
      : { type: 'directive.received', payload: { directive: request.directive, requestedBy: request.requestedBy, ...(request.reason ? { reason: request.reason } : {}) } };
  await appendReported(deps, run, then ? [first, then] : [first], now);
}
