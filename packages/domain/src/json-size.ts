/**
 * Bytes of a value's JSON text, measured without writing the text: parts that are immutable
 * (immutable.ts) are measured once and remembered, so measuring an output that wraps earlier
 * outputs (a loop's gathered iterations, an `echo` chain) costs what is new in it.
 */
import { memoOnImmutable } from './immutable.ts';

/** Measured sizes of immutable objects. */
const SIZES = new WeakMap<object, number>();

/**
 * Bytes of `value` as JSON text (UTF-8), exactly `Buffer.byteLength(JSON.stringify(value))`;
 * `undefined` (and anything else JSON.stringify leaves out at the top) counts as `null`. Throws
 * what JSON.stringify throws (a BigInt, a cycle; a cycle may also end in a RangeError).
 */
export function jsonByteLength(value: unknown): number {
  return valueBytes(value, '') ?? NULL_BYTES;
}

const NULL_BYTES = 4;

/**
 * Bytes of `value` as JSON where it stands under `key` (the property name, or the index as a
 * string: what `toJSON` receives), or undefined where JSON.stringify leaves it out (undefined, a
 * function, a symbol, a `toJSON` answering one of those).
 */
function valueBytes(value: unknown, key: string): number | undefined {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    // As JSON.stringify does (Dates, ObjectIds...): what toJSON answers is written instead.
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : NULL_BYTES;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      if (value === null) return NULL_BYTES;
      return memoOnImmutable(SIZES, value, objectBytes);
    case 'bigint':
      return Buffer.byteLength(JSON.stringify(value)); // throws, as JSON.stringify does
    default:
      return undefined;
  }
}

function objectBytes(value: unknown): number {
  if (Array.isArray(value)) {
    let bytes = 2 + Math.max(value.length - 1, 0);
    for (let i = 0; i < value.length; i++) bytes += valueBytes(value[i], String(i)) ?? NULL_BYTES;
    return bytes;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    // Boxed primitives, class instances (without toJSON): as JSON.stringify writes them.
    const text = JSON.stringify(value);
    return text === undefined ? NULL_BYTES : Buffer.byteLength(text);
  }
  const fields = value as Record<string, unknown>;
  let bytes = 2;
  let count = 0;
  for (const key of Object.keys(fields)) {
    const field = valueBytes(fields[key], key);
    if (field === undefined) continue;
    bytes += stringBytes(key) + 1 + field;
    count += 1;
  }
  return bytes + Math.max(count - 1, 0);
}

/** Printable ASCII without `"` and `\`: written as is between quotes. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function stringBytes(text: string): number {
  return PLAIN_TEXT.test(text) ? text.length + 2 : Buffer.byteLength(JSON.stringify(text));
}
