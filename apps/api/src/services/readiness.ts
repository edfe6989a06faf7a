/**
 * Readiness (issue #20 item 1): may this instance take traffic? `GET /readyz` (routes/health.ts)
 * answers from {@link Readiness.check}:
 *
 * - `store`: the store answers and accepts a write: one upsert of the document `{ _id: 'readiness' }`
 *   in the `health` collection (`checked_at`, `checked_by`: which instance wrote last). A store
 *   that refuses writes (a full disk, a MongoDB without a primary) or does not answer within
 *   `timeoutMs` fails it.
 * - `recovery`, `timeoutSweeper`, `retention`, `schedules`: each periodic loop of the instance finished a pass
 *   within twice its interval (counted from its start until the first pass). A loop that is not
 *   running (not started by this process) passes and says `running: false`.
 *
 * Bounded: the whole check gives up after `timeoutMs` (default 2,000), and a result is reused for
 * `cacheMs` (default 1,000) after it was made — concurrent probes share one check in flight — so
 * any number of probes costs at most one store write per `cacheMs`. Time comes from the injected
 * clock (tests drive a `ManualClock`).
 */
import type { DocumentStore } from '@switchyard/store';
import type { Clock, LoopStatus } from '@switchyard/runner';
import { SharedRead } from '../shared-read.ts';

/** One check of the report. `error` says why it failed (absent when `ok`). */
export interface CheckResult {
  ok: boolean;
  error?: string;
}

/** The store check: `latencyMs` is how long the upsert took. */
export interface StoreCheck extends CheckResult {
  latencyMs?: number;
}

/** A loop check: the loop's state with `lastRunAt` as an ISO timestamp (null before its first pass). */
export interface LoopCheck extends CheckResult {
  running: boolean;
  intervalMs: number;
  lastRunAt: string | null;
}

/** The loops {@link Readiness} checks, by the name the report gives them. */
export const LOOP_NAMES = ['recovery', 'timeoutSweeper', 'retention', 'schedules'] as const;
export type LoopName = (typeof LOOP_NAMES)[number];

/** What `/readyz` answers: 200 with `status: 'ready'` when every check is `ok`, else 503 `'unavailable'`. */
export interface ReadinessReport {
  status: 'ready' | 'unavailable';
  /** When the checks were made (ISO timestamp, the service clock); equal for cached answers. */
  checkedAt: string;
  checks: { store: StoreCheck } & Partial<Record<LoopName, LoopCheck>>;
}

/** Options of {@link Readiness}. */
export interface ReadinessOptions {
  store: DocumentStore;
  /** The loops to check, each a function returning its current status. */
  loops: Partial<Record<LoopName, () => LoopStatus>>;
  clock: Clock;
  /** Who writes the health document (the engine's owner id). */
  instance: string;
  /** Bound of one check, ms (default 2,000); a store call still pending then fails the store check. */
  timeoutMs?: number;
  /** How long a result is reused, ms (default 1,000). */
  cacheMs?: number;
  /** Rewrites error text before the report shows it (no data path, no address; default unchanged). */
  publicText?: (text: string) => string;
}

/** The collection the store check writes to. */
export const HEALTH_COLLECTION = 'health';

/** The one document of {@link HEALTH_COLLECTION}: when and by which instance the store was last checked. */
interface HealthDocument {
  _id: string;
  checked_at: Date;
  checked_by: string;
}

/** A loop whose last pass is older than this many intervals fails its check. */
const STALE_INTERVALS = 2;

/** The readiness checks of one instance, cached (see the module comment). */
export class Readiness {
  private readonly report: SharedRead<ReadinessReport>;
  /** How many store checks ran (tests assert that probes are cheap). */
  storeChecks = 0;

  constructor(private readonly options: ReadinessOptions) {
    this.report = new SharedRead(() => this.run(), { maxAgeMs: options.cacheMs ?? 1_000, now: () => options.clock.now().getTime() });
  }

  /** The current report: cached when younger than `cacheMs`, else a fresh check (one at a time). Never rejects. */
  check(): Promise<ReadinessReport> {
    return this.report.get();
  }

  private async run(): Promise<ReadinessReport> {
    const { clock } = this.options;
    const store = await this.checkStore();
    const now = clock.now();
    const checks: ReadinessReport['checks'] = { store };
    for (const name of LOOP_NAMES) {
      const status = this.options.loops[name];
      if (status) checks[name] = loopCheck(status(), now);
    }
    const ok = Object.values(checks).every((check) => check.ok);
    return { status: ok ? 'ready' : 'unavailable', checkedAt: now.toISOString(), checks };
  }

  /** Upserts the health document within `timeoutMs`. */
  private async checkStore(): Promise<StoreCheck> {
    const { store, clock, instance, publicText = (text: string) => text } = this.options;
    const timeoutMs = this.options.timeoutMs ?? 2_000;
    this.storeChecks += 1;
    const started = clock.now().getTime();
    let cancelTimer: () => void = () => {};
    const timedOut = new Promise<StoreCheck>((resolve) => {
      cancelTimer = clock.after(timeoutMs, () => resolve({ ok: false, error: `the store did not answer within ${timeoutMs} ms` }));
    });
    const write = store
      .collection<HealthDocument>(HEALTH_COLLECTION)
      .updateOne({ _id: 'readiness' }, { $set: { checked_at: new Date(started), checked_by: instance } }, { upsert: true })
      .then(
        (): StoreCheck => ({ ok: true, latencyMs: clock.now().getTime() - started }),
        (error: unknown): StoreCheck => ({ ok: false, error: publicText(error instanceof Error ? error.message : String(error)) }),
      );
    try {
      return await Promise.race([write, timedOut]);
    } finally {
      cancelTimer();
    }
  }
}

/** A loop's check at `now`: ok unless it runs and its last pass (or its start) is older than {@link STALE_INTERVALS} intervals. */
export function loopCheck(status: LoopStatus, now: Date): LoopCheck {
  const base = { running: status.running, intervalMs: status.intervalMs, lastRunAt: status.lastRunAt?.toISOString() ?? null };
  const since = status.lastRunAt ?? status.startedAt;
  if (!status.running || since === null) return { ok: true, ...base };
  const ageMs = now.getTime() - since.getTime();
  if (ageMs <= STALE_INTERVALS * status.intervalMs) return { ok: true, ...base };
  const what = status.lastRunAt === null ? 'has not finished a pass since it started' : 'last finished a pass';
  return { ok: false, ...base, error: `${what} ${ageMs} ms ago, more than twice its ${status.intervalMs} ms interval` };
}
