/**
 * Cache keys of filters: a string that two filters share exactly when mingo compiles them into the
 * same matcher (same fields, operators and values, in the same order). mingo compiles values into
 * its matchers (`$eq`, `$in`, `$gt`... capture them in closures), so a compiled query cannot be
 * reused with other values: the key holds the values, not only the shape.
 */
import { ObjectId } from 'mongodb';

/**
 * The cache key of `filter`, or undefined when it holds a value the key cannot describe exactly
 * (a Binary, Long, Decimal128, function, class instance...), one whose matcher would carry state
 * between calls (a RegExp with the `g` or `y` flag), or an aggregation expression (`$expr`, whose
 * variables such as `$$NOW` may be fixed at compilation): such filters are compiled on every call.
 * Values are type-tagged (`"1"` and `1` differ, so do `-0` and `0`); field order matters.
 */
export function filterKey(filter: unknown): string | undefined {
  const parts: string[] = [];
  return appendKey(filter, parts) ? parts.join('') : undefined;
}

/** Appends the key of `value` to `parts`; false when it has none (see {@link filterKey}). */
function appendKey(value: unknown, parts: string[]): boolean {
  switch (typeof value) {
    case 'string':
      parts.push(JSON.stringify(value));
      return true;
    case 'number':
      parts.push(Object.is(value, -0) ? 'n-0' : `n${value}`);
      return true;
    case 'boolean':
      parts.push(value ? 't' : 'f');
      return true;
    case 'undefined':
      parts.push('u');
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) {
    parts.push('z');
    return true;
  }
  if (Array.isArray(value)) {
    parts.push('[');
    for (const element of value) {
      if (!appendKey(element, parts)) return false;
      parts.push(',');
    }
    parts.push(']');
    return true;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    parts.push('{');
    const fields = value as Record<string, unknown>;
    for (const key of Object.keys(fields)) {
      if (key === '$expr') return false;
      parts.push(JSON.stringify(key), ':');
      if (!appendKey(fields[key], parts)) return false;
      parts.push(',');
    }
    parts.push('}');
    return true;
  }
  if (value instanceof ObjectId) {
    parts.push(`o${value.toHexString()}`);
    return true;
  }
  if (value instanceof Date) {
    parts.push(`d${value.getTime()}`);
    return true;
  }
  if (value instanceof RegExp && !value.global && !value.sticky) {
    parts.push(`r${JSON.stringify(value.source)}/${value.flags}`);
    return true;
  }
  return false;
}
