/**
 * A bound on the distinct values of one metric label (Prometheus keeps one time series per
 * label set, so an unbounded label is a memory leak of the scraper and of this process).
 */

/** Default of `SWITCHYARD_METRICS_MAX_WORKFLOWS`: distinct workflow ids labelled before `other`. */
export const DEFAULT_METRICS_MAX_WORKFLOWS = 1_000;

/** The label value every value past the bound is counted under. */
export const OTHER_LABEL = 'other';

/**
 * Admits the first `limit` distinct values it is asked about and maps every later new value to
 * {@link OTHER_LABEL}; a value once admitted stays admitted until the process ends.
 */
export class BoundedLabelValues {
  private readonly admitted = new Set<string>();

  /** `limit`: distinct values kept, ≥ 0 (0: every value is `other`). */
  constructor(readonly limit: number) {}

  /** `value` itself when admitted (now or before), else {@link OTHER_LABEL}. */
  label(value: string): string {
    if (this.admitted.has(value)) return value;
    if (this.admitted.size >= this.limit) return OTHER_LABEL;
    this.admitted.add(value);
    return value;
  }

  /** How many distinct values are admitted. */
  get size(): number {
    return this.admitted.size;
  }
}
