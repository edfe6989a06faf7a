/**
 * CEL values in, plain JSON out, for expression results:
 * - null, bool, string → themselves; double → number (NaN and ±Infinity are rejected: JSON has
 *   no representation for them);
 * - int and uint → number when within ±(2^53 - 1), else the decimal string (no silent rounding);
 * - bytes → base64 string (as in the protobuf JSON mapping);
 * - list → array; map → plain object, non-string keys written as strings (`1`, `true`; if two
 *   keys collide that way, the last one wins);
 * - timestamp → RFC 3339 string (`2024-01-01T00:00:00Z`), duration → seconds string (`1.500s`),
 *   both exactly as CEL's `string()` writes them;
 * - type values (`type(x)`) → the type's name (`double`, `list(dyn)`).
 * Other protobuf messages are rejected.
 * Conversion charges the evaluation budget in force (1 unit per value, plus string sizes), so a
 * huge result cannot hold the process either.
 */
import { celType, isCelList, isCelMap, isCelType, isCelUint } from '@bufbuild/cel';
import type { CelEnv, CelList, CelMap, CelValue } from '@bufbuild/cel';
import { chargeBudget, sizeUnits } from './evaluation-budget.ts';
import { childPath } from './json-path.ts';

/** A JSON value, as produced by {@link celToJson}. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Converts a CEL value (the result of an expression evaluated in `env`) to JSON. `path` names
 * the value in error messages (`result.items[2]`).
 * @throws Error when the value (or a nested one) has no JSON form, naming its path;
 *   CelBudgetExceededError when the budget in force runs out.
 */
export function celToJson(value: CelValue, env: CelEnv, path = 'result'): JsonValue {
  chargeBudget(1 + (typeof value === 'string' ? sizeUnits(value) : 0));
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`${path} is ${value}, which JSON cannot represent`);
      return value;
    case 'bigint':
      return integerToJson(value);
  }
  if (value === null) return null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (isCelUint(value)) return integerToJson(value.value);
  if (isCelList(value)) return listToJson(value, env, path);
  if (isCelMap(value)) return mapToJson(value, env, path);
  if (isCelType(value)) return value.toString();
  return messageToJson(value, env, path);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function integerToJson(value: bigint): number | string {
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

function listToJson(list: CelList, env: CelEnv, path: string): JsonValue[] {
  return Array.from(list, (element, index) => celToJson(element, env, childPath(path, index)));
}

function mapToJson(map: CelMap, env: CelEnv, path: string): { [key: string]: JsonValue } {
  // Object.fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return Object.fromEntries(
    Array.from(map, ([key, value]) => {
      const name = isCelUint(key) ? key.value.toString() : String(key);
      return [name, celToJson(value, env, childPath(path, name))];
    }),
  );
}

const STRING_FORMATTED_MESSAGES: ReadonlySet<string> = new Set(['google.protobuf.Timestamp', 'google.protobuf.Duration']);

function messageToJson(value: CelValue, env: CelEnv, path: string): string {
  const typeName = celType(value).name;
  if (STRING_FORMATTED_MESSAGES.has(typeName)) {
    const text = env.funcs.find('string')?.call(0, undefined, [value]);
    if (typeof text === 'string') return text;
  }
  throw new Error(`${path} is a ${typeName}, which has no JSON form here`);
}
