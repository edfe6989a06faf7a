/**
 * The lease of one execution (DESIGN.md "Ownership"): after the claim, a heartbeat renews it
 * every `heartbeatMs`; each renewal also brings back the directive pending on the run (how a
 * pause or cancel sent to another instance reaches this one within one heartbeat). The owner
 * fences itself: when renewals fail for as long as the lease lasts, it stops before the lease can
 * pass to another instance, so that no step runs twice at once: a deadline timer fires when the
 * lease runs out unrenewed, whatever the heartbeat period.
 */
import type { Repositories } from '@switchyard/store';
import type { Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { directiveStop, type StopReason } from './stop-reason.ts';

export interface LeaseOptions {
  repos: Repositories;
  clock: Clock;
  logger: Logger;
  runId: string;
  owner: string;
  /** How long a claim or renewal lasts, ms. */
  leaseMs: number;
  /** Renewal period, ms (< leaseMs). */
  heartbeatMs: number;
  /** When the claim was made (the lease holds until claimedAt + leaseMs). */
  claimedAt: Date;
  /** Called when the execution must stop: lease lost, or a directive found on the run. */
  onStop: (reason: StopReason) => void;
}

/** A held lease; {@link validUntil} is how long it is known to hold (epoch ms), kept current by the heartbeat. */
export class Lease {
  /** Epoch ms until which this owner is sure to hold the lease (the ledger checks it before every executor call). */
  validUntil: number;
  private cancelHeartbeat: (() => void) | null = null;
  private cancelDeadline: (() => void) | null = null;

  constructor(private readonly options: LeaseOptions) {
    this.validUntil = options.claimedAt.getTime() + options.leaseMs;
  }

  /** Starts the heartbeat and the deadline. */
  start(): void {
    const { repos, clock, logger, runId, owner, leaseMs, onStop } = this.options;
    this.armDeadline();
    this.cancelHeartbeat = clock.every(this.options.heartbeatMs, () => {
      const now = clock.now();
      repos.runs
        .renewLease(runId, owner, leaseMs, now)
        .then((renewal) => {
          if (!renewal) return onStop({ kind: 'lease_lost', detail: 'lease lost to another instance' });
          this.validUntil = now.getTime() + leaseMs;
          this.armDeadline();
          const directive = directiveStop(renewal);
          if (directive) onStop(directive);
        })
        .catch((error: unknown) => logger.warn({ err: error, runId }, 'heartbeat failed'));
    });
  }

  /** Stops the heartbeat and the deadline (the lease itself is released or ended by the engine). */
  stop(): void {
    this.cancelHeartbeat?.();
    this.cancelDeadline?.();
    this.cancelHeartbeat = this.cancelDeadline = null;
  }

  /** The self-fence: stops the execution when {@link validUntil} passes without a renewal (at that instant, whatever the heartbeat period). */
  private armDeadline(): void {
    const { clock, onStop } = this.options;
    this.cancelDeadline?.();
    this.cancelDeadline = clock.after(Math.max(0, this.validUntil - clock.now().getTime()), () =>
      onStop({ kind: 'lease_lost', detail: 'lease could not be renewed in time' }),
    );
  }
}
