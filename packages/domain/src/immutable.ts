/**
 * Immutable JSON values (issue #10, "a store that copies each document once"). Outputs flow from
 * node to node: a step's output becomes the next step's input, a loop gathers its iterations'
 * outputs, and `echo`-like steps nest what they received in what they return. Copying, measuring
 * or escaping such a value at every step costs its whole size each time, quadratic over a run.
 * Once a value is made {@link immutable}, its parts can be shared instead of copied (the embedded
 * store keeps them as they are) and whatever is computed from their content can be kept per
 * object ({@link memoOnImmutable}): each step then pays for what it added, not for all it holds.
 */

/** Objects (plain objects and arrays) made immutable by {@link immutable}: frozen, and so is everything in them. */
const IMMUTABLE = new WeakSet<object>();

/**
 * Freezes `value` deep and returns it, when it is JSON-like throughout: plain objects (prototype
 * `Object.prototype`) and arrays without holes holding strings, finite numbers, booleans, null and
 * such objects; afterwards {@link isImmutable} is true of it and of every object in it. A value
 * with anything else somewhere (a Date, a class instance, `undefined`, a function, NaN) is left
 * as it is, except its JSON-like parts, which are made immutable. Parts already immutable are not
 * walked again, so making a value that wraps earlier ones immutable costs only what is new.
 * Anyone may still read and share the value; nobody may change it any more (strict-mode code that
 * tries gets a TypeError).
 */
export function immutable<T>(value: T): T {
  makeImmutable(value, 0);
  return value;
}

/** Whether `value` is an object made immutable by {@link immutable}. */
export function isImmutable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && IMMUTABLE.has(value);
}

/**
 * `compute(value)`, kept in `cache` when `value` is immutable (its content cannot change, so
 * neither can anything computed from it); computed every time for any other value.
 */
export function memoOnImmutable<T>(cache: WeakMap<object, T>, value: unknown, compute: (value: unknown) => T): T {
  if (!isImmutable(value)) return compute(value);
  const object = value as object;
  let result = cache.get(object);
  if (result === undefined && !cache.has(object)) {
    result = compute(object);
    cache.set(object, result);
  }
  return result as T;
}

/**
 * Nesting depth past which a value is left mutable: well below the stack's limit (a cycle, or a
 * value nested thousands deep at once, is then left as it is rather than overflowing the stack).
 * An output that wraps earlier immutable ones is walked only where new, so its depth is no limit.
 */
const MAX_DEPTH = 1_000;

/** Makes the JSON-like parts of `value` immutable; returns whether all of it is JSON-like (and now immutable). */
function makeImmutable(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null || IMMUTABLE.has(value)) return true;
  if (depth > MAX_DEPTH) return false;
  let jsonLike = true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !makeImmutable(value[i], depth + 1)) jsonLike = false;
    }
  } else if (Object.getPrototypeOf(value) === Object.prototype) {
    const fields = value as Record<string, unknown>;
    for (const key in fields) if (!makeImmutable(fields[key], depth + 1)) jsonLike = false;
    // An inherited enumerable key never occurs on a plain object; own symbols are not JSON.
    if (Object.getOwnPropertySymbols(value).length > 0) jsonLike = false;
  } else {
    return false;
  }
  if (jsonLike) {
    Object.freeze(value);
    IMMUTABLE.add(value);
  }
  return jsonLike;
}
