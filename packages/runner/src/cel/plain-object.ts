/**
 * True for plain objects, such as those `JSON.parse` creates or object literals (prototype
 * `Object.prototype` or `null`); false for arrays, `null`, class instances (`Date`, `Map`, ...)
 * and primitives.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
