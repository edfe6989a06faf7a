/**
 * The one place where API names (camelCase) meet MongoDB names (snake_case) — DESIGN.md
 * "Persistence", "HTTP conventions".
 *
 * Keys of our own structures are converted recursively. Values under the user-data fields in
 * {@link OPAQUE_FIELDS} (step `config`, run input, I/O snapshots, ...) keep their keys as the user
 * wrote them; only the characters MongoDB cannot store in every position are escaped, reversibly:
 * `~` -> `~t`, `.` -> `~p`, `$` -> `~d`, NUL -> `~0`. A key without those characters is stored unchanged, so
 * operators reading documents with mongosh see the user's keys.
 */
import { immutable, isImmutable } from './immutable.ts';

/** Fields (in either naming) whose values are user JSON: their keys are never renamed. */
export const OPAQUE_FIELDS: ReadonlySet<string> = new Set([
  'config',
  'inputSchema',
  'input_schema',
  'initialInput',
  'initial_input',
  'inputSnapshot',
  'input_snapshot',
  'outputSnapshot',
  'output_snapshot',
  'originalOutputSnapshot',
  'original_output_snapshot',
  'finalOutput',
  'final_output',
  'stepOutput',
  'step_output',
  'editedOutput',
  'edited_output',
  'userInput',
  'user_input',
  'defaultValue',
  'default_value',
  'allowedValues',
  'allowed_values',
  'value',
  'payload',
]);

/** `fooBarBaz` -> `foo_bar_baz`. */
export function camelToSnake(key: string): string {
  return memoized(TO_SNAKE, key, renameToSnake);
}

/** `foo_bar_baz` -> `fooBarBaz`. */
export function snakeToCamel(key: string): string {
  return memoized(TO_CAMEL, key, renameToCamel);
}

const renameToSnake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const renameToCamel = (key: string): string => key.replace(/(?<=[a-z0-9])_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Renamed field names: structural keys are the schema's few hundred names, renamed on every read
 * and write. Bounded all the same (emptied when full), should a caller map keys it does not know.
 */
const TO_SNAKE = new Map<string, string>();
const TO_CAMEL = new Map<string, string>();
const MAX_MEMOIZED_KEYS = 10_000;

function memoized(memo: Map<string, string>, key: string, rename: (key: string) => string): string {
  let renamed = memo.get(key);
  if (renamed === undefined) {
    if (memo.size >= MAX_MEMOIZED_KEYS) memo.clear();
    renamed = rename(key);
    memo.set(key, renamed);
  }
  return renamed;
}

/** True for `{}`-style objects (not arrays, Dates, ObjectIds or other class instances). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const ESCAPES: Record<string, string> = { '~': '~t', '.': '~p', $: '~d', '\0': '~0' };
const UNESCAPES: Record<string, string> = { t: '~', p: '.', d: '$', '0': '\0' };

function escapeKey(key: string): string {
  return /[~.$\0]/.test(key) ? key.replace(/[~.$\0]/g, (c) => ESCAPES[c]!) : key;
}

function unescapeKey(key: string): string {
  return key.includes('~') ? key.replace(/~([tpd0])/g, (_, c: string) => UNESCAPES[c]!) : key;
}

/**
 * User data with `mapKey` applied to every key, deep. Returned as it is when no key changes (the
 * usual case: keys without `~ . $ \0`): both directions hand their result to a store that copies
 * it (write) or got a private copy from one (read), so sharing is safe and saves a deep copy.
 */
function mapOpaque(value: unknown, mapKey: (key: string) => string): unknown {
  return keysChange(value, mapKey) ? copyOpaque(value, mapKey) : value;
}

/** Whether a key mapping changes some key of an immutable value, by mapping (see {@link keysChange}). */
const KEYS_CHANGE = new Map<(key: string) => string, WeakMap<object, boolean>>();

/**
 * True when `mapKey` changes some key of `value`, deep. A loop over an explicit stack, not
 * recursion: user data may nest thousands of levels (an output wrapping earlier outputs), which
 * a recursive walk of several frames a level overflowed on a busy machine. Remembered for
 * immutable parts (immutable.ts), so an output wrapping earlier outputs is walked only where new:
 * a part already walked is skipped (or decides at once), and when nothing changes, every
 * immutable part walked is remembered as unchanged.
 */
function keysChange(value: unknown, mapKey: (key: string) => string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let cache = KEYS_CHANGE.get(mapKey);
  if (!cache) KEYS_CHANGE.set(mapKey, (cache = new WeakMap()));
  const walked: object[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (isImmutable(next)) {
      const known = cache.get(next);
      if (known === true) return rememberChange(cache, value);
      if (known === false) continue;
      walked.push(next);
    }
    if (Array.isArray(next)) {
      for (const item of next) stack.push(item);
    } else if (isPlainObject(next)) {
      for (const key in next) {
        if (mapKey(key) !== key) return rememberChange(cache, value);
        stack.push(next[key]);
      }
    }
  }
  for (const part of walked) cache.set(part, false);
  return false;
}

/** `true`, remembered for `root` when it is immutable (its parts are not known to change). */
function rememberChange(cache: WeakMap<object, boolean>, root: unknown): true {
  if (isImmutable(root)) cache.set(root as object, true);
  return true;
}

function copyOpaque(value: unknown, mapKey: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => copyOpaque(v, mapKey));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[mapKey(k)] = copyOpaque(v, mapKey);
  return out;
}

/**
 * Mapped immutable structures, by direction (to documents, from documents): a workflow's
 * definition is read for every trigger and stored and read again with every run; made immutable,
 * it is mapped once per direction, and the result of one direction is the other's memo.
 */
const TO_DOCUMENT = new WeakMap<object, unknown>();
const FROM_DOCUMENT = new WeakMap<object, unknown>();

function mapStructure(value: unknown, renameKey: (key: string) => string, mapUserKey: (key: string) => string): unknown {
  if (typeof value !== 'object' || value === null || !isImmutable(value)) return mapStructureOnce(value, renameKey, mapUserKey);
  const [memo, inverse] = renameKey === camelToSnake ? [TO_DOCUMENT, FROM_DOCUMENT] : [FROM_DOCUMENT, TO_DOCUMENT];
  let mapped = memo.get(value);
  if (mapped === undefined) {
    mapped = immutable(mapStructureOnce(value, renameKey, mapUserKey));
    memo.set(value, mapped);
    if (typeof mapped === 'object' && mapped !== null) inverse.set(mapped, value);
  }
  return mapped;
}

function mapStructureOnce(value: unknown, renameKey: (key: string) => string, mapUserKey: (key: string) => string): unknown {
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = mapStructure(value[i], renameKey, mapUserKey);
    return out;
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (v === undefined) continue;
    out[renameKey(k)] = OPAQUE_FIELDS.has(k) ? mapOpaque(v, mapUserKey) : mapStructure(v, renameKey, mapUserKey);
  }
  return out;
}

/**
 * API/domain shape -> MongoDB document shape: camelCase keys become snake_case, user data keeps
 * its keys (escaped), `undefined` fields are dropped, Dates and ObjectIds pass through.
 */
export function toDocument<T = Record<string, unknown>>(value: unknown): T {
  return mapStructure(value, camelToSnake, escapeKey) as T;
}

/** MongoDB document shape -> API/domain shape: the exact inverse of {@link toDocument}. */
export function fromDocument<T = Record<string, unknown>>(value: unknown): T {
  return mapStructure(value, snakeToCamel, unescapeKey) as T;
}

/** Deepest nesting of user JSON the service accepts (MongoDB stores at most 100 levels per document). */
export const MAX_USER_JSON_DEPTH = 32;

/**
 * Nesting depth of a JSON value: 0 for a scalar, 1 for `{}` or `[]` of scalars, ... Iterative,
 * so that any input (however deep or wide) is measured without exhausting the stack.
 */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    const children = Array.isArray(current) ? current : isPlainObject(current) ? Object.values(current) : null;
    if (children === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Escapes the keys of one user-data value for storage (as {@link toDocument} does). */
export function toStoredUserData(value: unknown): unknown {
  return mapOpaque(value, escapeKey);
}

/** Inverse of {@link toStoredUserData}. */
export function fromStoredUserData(value: unknown): unknown {
  return mapOpaque(value, unescapeKey);
}
