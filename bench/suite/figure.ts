/**
 * One line of the benchmark suite's report: a figure, what was measured, and its goal.
 */
import type { ProfileSummary } from './cpu-profile.ts';

/** A goal: the measured value must be at least (`>=`) or at most (`<=`) `value`. */
export interface Goal {
  readonly op: '>=' | '<=';
  readonly value: number;
}

/** A measured figure. */
export interface Figure {
  /** Stable identifier, for the JSON report (e.g. `chain500.nodeRunsPerSecond`). */
  readonly key: string;
  /** The figure as the table names it. */
  readonly label: string;
  /** The value, in `unit`; null when it could not be measured (see `note`). */
  readonly measured: number | null;
  /** Unit of `measured` and of the goal: `node runs/s`, `runs/s`, `req/s`, `ms`, `MB`, `bytes`, `ratio`, `gates`... */
  readonly unit: string;
  /** The goal, or null for a figure reported for information. */
  readonly goal: Goal | null;
  /** Why the figure is missing, or what qualifies it. */
  readonly note?: string;
  /** The service's CPU profile while it was measured (its top self-time functions), when profiled. */
  readonly profile?: ProfileSummary;
}

/** True when `figure` meets its goal; null when it has no goal or was not measured. */
export function meetsGoal(figure: Figure): boolean | null {
  if (figure.goal === null || figure.measured === null) return null;
  return figure.goal.op === '>=' ? figure.measured >= figure.goal.value : figure.measured <= figure.goal.value;
}

/** `promise`, or a rejection with an Error naming `label` after `ms` milliseconds (the timer never keeps the process alive). */
export async function withTimeout<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not finish within ${(ms / 1000).toFixed(0)} s`)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Peak resident set size of this process so far, in MB (`process.resourceUsage().maxRSS`, which is in KiB). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}
