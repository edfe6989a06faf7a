/** Type guards for values and entries that may be undefined (an expansion that failed, a problem reported). */

/** True when `value` is not undefined. */
export function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/** True when the value of a `[name, value]` entry is not undefined. */
export function hasDefinedValue<T>(entry: readonly [string, T | undefined]): entry is [string, T] {
  return entry[1] !== undefined;
}
