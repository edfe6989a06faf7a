/**
 * JSON data in, CEL values out. Workflow data is JSON, so the mapping is:
 * - `null`, booleans and strings map to CEL null, bool and string;
 * - every number maps to a CEL `double`, integers included (see `cel-engine.ts` for what that
 *   means in expressions);
 * - arrays map to lists; plain objects map to maps with string keys. Properties whose value is
 *   `undefined` are absent and `undefined` array elements are `null`, as in `JSON.stringify`.
 * Anything else (bigint, functions, symbols, `Date`, `Map`, class instances) is rejected with an
 * Error naming the path of the value (`input.when`), when evaluation reaches it.
 *
 * Objects and arrays are converted lazily, one property or element at a time as the expression
 * reads them, so an expression that reads one field of a large run context does not copy the
 * whole context; each is converted at most once per evaluation.
 * Keys are looked up as own properties only: `input.constructor` or `input.__proto__` find the
 * data's own keys of that name or nothing, never JavaScript prototype members.
 */
import { celList, celMap } from '@bufbuild/cel';
import type { CelInput, CelUint } from '@bufbuild/cel';
import { childPath } from './json-path.ts';
import { isPlainObject } from './plain-object.ts';

/**
 * Converts variable values into CEL bindings by name. Variables whose value is `undefined` are
 * left out. The returned record has no prototype, so only these names resolve.
 * @throws Error when a variable's value itself is not a JSON value (nested values fail lazily).
 */
export function toCelBindings(variables: Readonly<Record<string, unknown>>): Record<string, CelInput> {
  const bindings: Record<string, CelInput> = Object.create(null) as Record<string, CelInput>;
  for (const [name, value] of Object.entries(variables)) {
    if (value !== undefined) bindings[name] = toCelValue(value, name);
  }
  return bindings;
}

/** Converts the JSON value at `path`; nested objects become lazy maps. */
function toCelValue(value: unknown, path: string): CelInput {
  switch (typeof value) {
    case 'boolean':
    case 'number':
    case 'string':
      return value;
    case 'object':
      if (value === null) return null;
      if (Array.isArray(value)) return celList((isFlat(value) ? value : lazyElements(value, path)) as readonly CelInput[]);
      if (isPlainObject(value)) return celMap(new JsonObjectMap(value, path));
      throw new Error(`${path} is not a JSON value (${value.constructor?.name ?? 'object'})`);
    default:
      throw new Error(`${path} is not a JSON value (${typeof value})`);
  }
}

/** Arrays known to hold only strings, numbers, booleans and nulls (usable as CEL lists as they are), by array. */
const flatArrays = new WeakMap<readonly unknown[], boolean>();

/** True when every element of `array` is a string, number, boolean or null (remembered per array). */
function isFlat(array: readonly unknown[]): boolean {
  let flat = flatArrays.get(array);
  if (flat === undefined) {
    flat = array.every((element) => element === null || typeof element === 'string' || typeof element === 'number' || typeof element === 'boolean');
    flatArrays.set(array, flat);
  }
  return flat;
}

/**
 * A read-only view of a JSON array whose elements are converted when first read (then kept), for
 * @bufbuild/cel's list (which reads `length`, `[index]` and `values()`): `input.items[0]` converts
 * one element of a large array, not all of them.
 */
function lazyElements(array: readonly unknown[], path: string): unknown[] {
  const converted = new Map<number, CelInput>();
  const element = (index: number): CelInput => {
    let value = converted.get(index);
    if (value === undefined && !converted.has(index)) {
      value = toCelValue(array[index] ?? null, childPath(path, index));
      converted.set(index, value);
    }
    return value as CelInput;
  };
  function* values(): Generator<CelInput> {
    for (let index = 0; index < array.length; index++) yield element(index);
  }
  // The proxy's target is a stand-in of the same length, not `array`: a frozen (immutable) array's
  // elements are non-configurable, and a proxy must report those of its target as they are.
  return new Proxy(new Array<unknown>(array.length), {
    get(target, property, receiver) {
      if (typeof property === 'string' && ARRAY_INDEX.test(property)) {
        const index = Number(property);
        return index < target.length ? element(index) : undefined;
      }
      if (property === 'values' || property === Symbol.iterator) return values;
      return Reflect.get(target, property, receiver);
    },
  });
}

/** A canonical array index (`0`, `17`; not `01` or `-1`). */
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

type CelMapKey = bigint | string | boolean | CelUint;

/** A read-only map view of a plain object's own, defined properties, converting values on access. */
class JsonObjectMap implements ReadonlyMap<CelMapKey, CelInput> {
  readonly #object: Readonly<Record<string, unknown>>;
  readonly #path: string;
  #keys: readonly string[] | undefined;
  /** Values already converted, by key: an expression that reads `input.items` in a loop converts it once. */
  readonly #converted = new Map<string, CelInput>();

  constructor(object: Readonly<Record<string, unknown>>, path: string) {
    this.#object = object;
    this.#path = path;
  }

  get size(): number {
    return this.#definedKeys().length;
  }

  get(key: CelMapKey): CelInput | undefined {
    if (!this.has(key)) return undefined;
    const name = key as string;
    let value = this.#converted.get(name);
    if (value === undefined) {
      value = toCelValue(this.#object[name], childPath(this.#path, name));
      this.#converted.set(name, value);
    }
    return value;
  }

  has(key: CelMapKey): boolean {
    return typeof key === 'string' && Object.hasOwn(this.#object, key) && this.#object[key] !== undefined;
  }

  keys(): MapIterator<string> {
    return this.#definedKeys().values();
  }

  *values(): MapIterator<CelInput> {
    for (const key of this.#definedKeys()) yield this.get(key) as CelInput;
  }

  *entries(): MapIterator<[string, CelInput]> {
    for (const key of this.#definedKeys()) yield [key, this.get(key) as CelInput];
  }

  [Symbol.iterator](): MapIterator<[string, CelInput]> {
    return this.entries();
  }

  forEach(callback: (value: CelInput, key: CelMapKey, map: ReadonlyMap<CelMapKey, CelInput>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  #definedKeys(): readonly string[] {
    this.#keys ??= Object.keys(this.#object).filter((key) => this.#object[key] !== undefined);
    return this.#keys;
  }
}
