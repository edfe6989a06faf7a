/**
 * A cost budget for one CEL evaluation (DESIGN.md "CEL"; issue "Reliability" item 1).
 *
 * @bufbuild/cel evaluates synchronously and has no cost limit of its own, so an expression such as
 * `input.l.filter(x, input.l.exists(y, y < 0.0))` over 8,000 numbers would hold the event loop for
 * seconds. Every compiled expression is therefore instrumented (see `metering.ts`) with calls to
 * the functions below, which charge the evaluation's budget in work units:
 * - 1 unit per comprehension iteration (`all`, `exists`, `exists_one`, `map`, `filter`);
 * - 1 unit per function or operator argument, plus its deep size: every element of a list, key
 *   and value of a map, nested ones included, and one unit per {@link STRING_UNIT_CHARS}
 *   characters of a string or bytes (work such as `in`, `==`, `+`, `contains`, `format` or
 *   `matches` is linear in those sizes);
 * - the size of what `replace` would build, before it builds it (`safe-strings.ts`);
 * - the (shallow) size of the range a comprehension iterates over, each time it starts, and of
 *   the argument of `size`;
 * - one unit per element or character when the result is converted to JSON.
 * When the total passes the budget the evaluation stops at once with
 * {@link CelBudgetExceededError}, which fails the node without retries. The default budget (see
 * {@link DEFAULT_EVALUATION_BUDGET}) keeps the worst measured expression under about 50 ms on a
 * 2-core machine (`npm run bench` reports the worst evaluation as `cel.worstEvaluationMs`).
 */
import { celFunc, CelScalar, isCelList, isCelMap } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';

/** Work units one evaluation may spend when nothing else is configured. */
export const DEFAULT_EVALUATION_BUDGET = 100_000;

/** Characters of a string (or bytes of a bytes value) that count as one work unit. */
export const STRING_UNIT_CHARS = 16;

/** Thrown, and returned as the evaluation's failure, when an evaluation spends more than its budget. */
export class CelBudgetExceededError extends Error {
  override readonly name = 'CelBudgetExceededError';

  /** `limit` is the budget in work units. */
  constructor(readonly limit: number) {
    super(
      `evaluation exceeded its cost budget of ${limit} work units (comprehension iterations and the sizes of lists, maps and ` +
        `strings it processes): simplify the expression or give it less data`,
    );
  }
}

/** The work units one evaluation may still spend. Not thread-safe, like the evaluation itself. */
export class EvaluationBudget {
  #spent = 0;
  #exceeded = false;

  /** `limit`: work units (a positive integer). */
  constructor(readonly limit: number) {}

  /** Units spent so far. */
  get spent(): number {
    return this.#spent;
  }

  /** True once a charge passed the limit (later charges throw at once). */
  get exceeded(): boolean {
    return this.#exceeded;
  }

  /** Units left before the limit (0 once exceeded). */
  get remaining(): number {
    return Math.max(0, this.limit - this.#spent);
  }

  /** Adds `units`. @throws CelBudgetExceededError when the total passes the limit. */
  charge(units: number): void {
    this.#spent += units;
    if (this.#spent > this.limit || this.#exceeded) {
      this.#exceeded = true;
      throw new CelBudgetExceededError(this.limit);
    }
  }
}

/** Deep sizes already computed, by list or map (values are immutable during an evaluation). */
const deepSizes = new WeakMap<object, number>();

/** Smaller lists and maps are measured again rather than remembered (cheaper than the WeakMap). */
const MEMO_MIN_UNITS = 64;

/**
 * Work units for `value`, deeply: every element of a list, every key and value of a map (and
 * theirs, recursively), and one unit per {@link STRING_UNIT_CHARS} characters of a string or
 * bytes. The walk stops once it passes `limit` (then the result is only known to be larger);
 * complete results are remembered per list or map.
 */
export function sizeUnits(value: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  if (typeof value === 'string') return Math.ceil(value.length / STRING_UNIT_CHARS);
  if (value instanceof Uint8Array) return Math.ceil(value.length / STRING_UNIT_CHARS);
  if (!isCelList(value) && !isCelMap(value)) return 0;
  const known = deepSizes.get(value);
  if (known !== undefined) return known;
  let units = 0;
  if (isCelList(value)) {
    for (const element of value) {
      units += 1 + sizeUnits(element, limit - units);
      if (units > limit) return units;
    }
  } else {
    for (const [key, element] of value) {
      units += 1 + sizeUnits(key, limit - units) + sizeUnits(element, limit - units);
      if (units > limit) return units;
    }
  }
  if (units >= MEMO_MIN_UNITS) deepSizes.set(value, units);
  return units;
}

/** The budget of the evaluation in progress; evaluations are synchronous, so one slot suffices. */
let current: EvaluationBudget | undefined;

/**
 * Runs `evaluate` with `budget` charged by the metering functions; restores the previous budget
 * afterwards (nesting is harmless). Returns what `evaluate` returns; rethrows what it throws.
 */
export function withBudget<T>(budget: EvaluationBudget, evaluate: () => T): T {
  const previous = current;
  current = budget;
  try {
    return evaluate();
  } finally {
    current = previous;
  }
}

/** Charges `units` to the budget in force, if any. @throws CelBudgetExceededError when it runs out. */
export function chargeBudget(units: number): void {
  current?.charge(units);
}

/** Name of the function wrapped around arguments and iteration ranges: charges 1 + the value's size. */
export const METER_VALUE = '@meter_value';
/**
 * Name of the function wrapped around comprehension ranges and the argument of `size`: charges 1
 * + the value's shallow size (elements of a list or map, not theirs; string and bytes length), as
 * walking a range or taking a size does not look into the elements.
 */
export const METER_SHALLOW = '@meter_shallow';
/** Name of the function wrapped around comprehension loop conditions: charges 1 per iteration. */
export const METER_ITERATION = '@meter_iteration';

/**
 * The metering functions, to add to the CEL environment. Their names start with `@`, which CEL
 * source cannot spell, so only the instrumentation calls them. Without a budget in force (an
 * evaluation outside {@link withBudget}) they charge nothing.
 */
export const meteringFunctions: readonly CelFunc[] = [
  celFunc(METER_VALUE, [CelScalar.DYN], CelScalar.DYN, (value) => {
    if (current) current.charge(1 + sizeUnits(value, current.remaining));
    return value;
  }),
  celFunc(METER_SHALLOW, [CelScalar.DYN], CelScalar.DYN, (value) => {
    current?.charge(1 + (isCelList(value) || isCelMap(value) ? value.size : sizeUnits(value)));
    return value;
  }),
  celFunc(METER_ITERATION, [CelScalar.DYN], CelScalar.DYN, (value) => {
    current?.charge(1);
    return value;
  }),
];
