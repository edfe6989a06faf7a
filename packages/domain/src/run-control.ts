/**
 * Run directives (issue "Run control" item 1; spec workflow-management-api.md "Internal Data
 * Flow — Control Endpoints" 3.1, "Internal WorkflowRun Fields" `pending_directive`, `paused_at`):
 * pause, resume and cancel a run, and the run timeout the sweeper enforces like a cancel.
 *
 * A directive is applied in one of two ways, chosen by {@link planDirective} from the run's
 * status and the directive already pending on it:
 * - `apply`: nobody executes the run (pending, paused, parked at its gates): the document is
 *   changed at once with a compare-and-set on its status.
 * - `signal`: a runner executes it: the directive is stored as `pending_directive` (so that it
 *   survives a crash of that runner and reaches it from any instance through its heartbeat) and
 *   signalled in-process; the runner honours it (pause at the next node boundary, cancel at once).
 */
import { actorName, type Actor } from './access.ts';
import type { RunStatus } from './run-status.ts';
import { TERMINAL_RUN_STATUSES, UNOWNED_RUN_STATUSES } from './run-status.ts';

/** What a client may ask of a run. */
export const RUN_DIRECTIVES = ['pause', 'resume', 'cancel'] as const;
export type RunDirective = (typeof RUN_DIRECTIVES)[number];

/**
 * What may be pending on a running run for its runner to honour (`pending_directive`): a pause, a
 * cancel, or the run's timeout (a cancel that ends the run `failed`).
 */
export const PENDING_DIRECTIVES = ['pause', 'cancel', 'timeout'] as const;
export type PendingDirective = (typeof PENDING_DIRECTIVES)[number];

/** A directive as the engine and the sweeper issue it: a client's, or the run timeout. */
export type DirectiveKind = RunDirective | 'timeout';

/** How to carry out a directive on a run in a given state. */
export type DirectivePlan =
  /** Change the idle run's document at once (pause, resume → pending, cancel/timeout → ended). */
  | { kind: 'apply' }
  /** Store `pending` on the running run for its runner (replacing `replaces`: null or a weaker directive). */
  | { kind: 'signal'; pending: PendingDirective }
  /** Resume of a running run whose pause was not honoured yet: withdraw the pending pause. */
  | { kind: 'withdraw_pause' }
  /** The directive already holds (pause a paused run, cancel a cancelled one): nothing to do. */
  | { kind: 'noop'; message: string }
  /** The run's state does not allow it (409). */
  | { kind: 'conflict'; message: string };

/**
 * Decides how `directive` applies to a run in `status` with `pending` pending on it. Pure.
 *
 * | directive | pending / awaiting_approval | running (nothing pending) | running (pause pending) | running (cancel/timeout pending) | paused | cancelled | completed / failed |
 * | --- | --- | --- | --- | --- | --- | --- | --- |
 * | pause | apply (→ paused) | signal | noop | conflict | noop | conflict | conflict |
 * | resume | noop | noop | withdraw pause | conflict | apply (→ pending) | conflict | conflict |
 * | cancel, timeout | apply (→ ended) | signal | signal (cancel wins) | noop | apply | noop (cancel) | conflict |
 */
export function planDirective(directive: DirectiveKind, status: RunStatus, pending: PendingDirective | null): DirectivePlan {
  const stopping = pending === 'cancel' || pending === 'timeout';
  if (TERMINAL_RUN_STATUSES.includes(status)) {
    if (status === 'cancelled' && directive === 'cancel') return { kind: 'noop', message: 'Run is already cancelled' };
    return { kind: 'conflict', message: `Cannot ${directive} a run that is ${status}` };
  }
  if (status === 'running' && stopping) {
    if (directive === 'cancel' || directive === 'timeout') return { kind: 'noop', message: 'Run is already being cancelled' };
    return { kind: 'conflict', message: `Cannot ${directive} a run that is being cancelled` };
  }
  switch (directive) {
    case 'pause':
      if (status === 'paused') return { kind: 'noop', message: 'Run is already paused' };
      if (status === 'running') return pending === 'pause' ? { kind: 'noop', message: 'Pause already requested; the run pauses once its executing nodes finish' } : { kind: 'signal', pending: 'pause' };
      return { kind: 'apply' };
    case 'resume':
      if (status === 'paused') return { kind: 'apply' };
      if (status === 'running' && pending === 'pause') return { kind: 'withdraw_pause' };
      return { kind: 'noop', message: `Run is not paused (it is ${status})` };
    case 'cancel':
    case 'timeout':
      return UNOWNED_RUN_STATUSES.includes(status) ? { kind: 'apply' } : { kind: 'signal', pending: directive };
  }
}

/** The run's error summary when a cancel directive ended it: `Cancelled by <who>[: <reason>]` (who: the actor's username, else user id). */
export function cancelSummary(cancelledBy: Actor | null, reason: string | null): string {
  return `Cancelled by ${actorName(cancelledBy) ?? 'a user'}${reason ? `: ${reason}` : ''}`;
}

/** The run's error summary when its timeout ended it. */
export function timeoutSummary(timeoutSeconds: number | null): string {
  return `Run timed out: it did not end within its timeoutSeconds (${timeoutSeconds ?? '?'} s) and was stopped`;
}
