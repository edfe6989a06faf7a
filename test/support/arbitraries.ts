/**
 * fast-check arbitraries for fuzzing the REST API (test/fuzz.e2e.test.ts):
 *
 * - {@link schemaArbitrary}: values of a TypeBox schema, which is a plain JSON Schema object (the
 *   walk knows `type`, `properties`/`required`, `items`, `anyOf`, `enum`, `const`, `pattern`,
 *   length and range bounds, `$defs`/`$ref` of `Type.Cyclic`), with per-property overrides where
 *   a random value of the declared type would almost never pass the rules behind the schema
 *   (executor keys, CEL, ids of the fixtures);
 * - {@link workflowBody}: hand-written node trees of every node type that follow the definition
 *   rules (so that a good share is saved), with hostile names, configs and CEL mixed in;
 * - {@link mutated}: a valid value broken in one to three places (a field dropped, a wrong type,
 *   a number out of range, an extra or poisoning key, a huge string, deep nesting);
 * - hostile building blocks: {@link jsonValue} with odd keys, {@link celExpression},
 *   {@link hugeString}, {@link deepValue}, and query strings ({@link queryString}, {@link queryParams})
 *   and path ids ({@link otherId});
 * - {@link hasPoisoningKey}: whether a value holds a key the service must refuse.
 *
 * Everything is JSON: bodies are sent as `JSON.stringify` text, so what is generated is what the
 * server parses (an own `__proto__` key included).
 */
import fc, { type Arbitrary } from 'fast-check';

/** A JSON Schema object (what TypeBox builds). */
export type JsonSchema = Readonly<Record<string, any>>;

/** A path into a JSON value: object keys and array indexes. */
export type JsonPath = ReadonlyArray<string | number>;

// ---------------------------------------------------------------------------------------------
// Hostile building blocks

/**
 * One character beyond ASCII: any code point but a surrogate. (fast-check's `grapheme` and
 * `binary` string units would do, but each costs over a second to set up in every worker.)
 */
export const unicodeChar: Arbitrary<string> = fc.oneof(fc.integer({ min: 0x80, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff })).map((cp) => String.fromCodePoint(cp));

/** Any code points, lone surrogates included (not well-formed Unicode: the service refuses those). */
export function codePointString(maxLength: number): Arbitrary<string> {
  return fc.array(fc.integer({ min: 0, max: 0x10ffff }), { maxLength }).map((cps) => String.fromCodePoint(...cps));
}

/** Keys the service accepts as data although they look dangerous to a store or a JS runtime. */
export const ODD_KEYS: readonly string[] = [
  'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', '__lookupSetter__',
  '$', '$cel', '$literal', '$where', '$set', '$$', '.', '..', 'a.b', '.a', 'a.', '', ' ', '\u0000', '\n', '\t',
  'ä', '😀', '0', '-1', '[0]', 'NaN', 'null', 'undefined', 'x'.repeat(300),
];

/** Keys that make any body a 400 (body-guard.ts): prototype poisoning and lone surrogates. */
export const REJECTED_KEYS: readonly string[] = ['__proto__', '\ud800', 'a\udfff'];

/** An ordinary key, sometimes an odd one; `hostile` adds the keys the service must refuse. */
export function jsonKey(hostile = false): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ maxLength: 8, unit: 'grapheme-ascii' }), weight: 6 },
    { arbitrary: fc.constantFrom(...ODD_KEYS), weight: 2 },
    { arbitrary: fc.constantFrom(...REJECTED_KEYS), weight: hostile ? 1 : 0 },
  );
}

/** Strings that probe encodings and parsers. */
const ODD_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'null', 'true', '0', '-1', '1e400', 'NaN', '__proto__', '{"$cel":"1"}', '${env:HOME}', '${DATA_DIR}',
  '\u202e', '\ufeff', 'ä', '😀', 'a\u0301', '%00', '%E0%A4%A', '../../etc/passwd', "'; DROP TABLE x; --", '<script>', '\r\n',
];

/** A string: mostly short, sometimes unicode or an odd one; `hostile` adds lone surrogates. */
export function jsonString(hostile = false): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ maxLength: 16, unit: 'grapheme-ascii' }), weight: 6 },
    { arbitrary: fc.string({ maxLength: 8, unit: unicodeChar }), weight: 2 },
    { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 2 },
    { arbitrary: fc.constantFrom('\ud800', 'x\udc00y'), weight: hostile ? 1 : 0 },
  );
}

/** A JSON scalar, edge numbers included (NaN and infinities are not JSON). */
export function jsonScalar(hostile = false): Arbitrary<unknown> {
  return fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.constantFrom(0, -0, 1, -1, 2 ** 53, -(2 ** 53) - 2, 1e308, -1e308, 5e-324, 0.1, 1.5),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    jsonString(hostile),
  );
}

/** Any JSON value up to `maxDepth` levels, with odd keys (and, when `hostile`, the keys the service refuses). */
export function jsonValue(options: { maxDepth?: number; hostile?: boolean } = {}): Arbitrary<unknown> {
  const { maxDepth = 3, hostile = false } = options;
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { maxDepth, depthIdentifier: 'json' },
      jsonScalar(hostile),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(jsonKey(hostile), tie('value'), { maxKeys: 4 }),
    ),
  }));
  return value;
}

/** A JSON object (free-form user data: configs, inputs, form values). */
export function jsonObject(options: { maxDepth?: number; hostile?: boolean } = {}): Arbitrary<Record<string, unknown>> {
  return fc.dictionary(jsonKey(options.hostile), jsonValue({ ...options, maxDepth: Math.max(0, (options.maxDepth ?? 3) - 1) }), { maxKeys: 5 });
}

/** A long string: a few KB, tens or hundreds of KB, or more than the 1 MiB body limit (a 413). */
export function hugeString(): Arbitrary<string> {
  const length = fc.oneof({ arbitrary: fc.constant(5_000), weight: 8 }, { arbitrary: fc.constant(70_000), weight: 3 }, { arbitrary: fc.constantFrom(300_000, 1_100_000), weight: 2 });
  return length.map((n) => 'x'.repeat(n));
}

/** Arrays and objects nested `depth` levels (past the body guard's 128 and the 32 of user data). */
export function deepValue(): Arbitrary<unknown> {
  return fc.tuple(fc.integer({ min: 20, max: 400 }), fc.boolean()).map(([depth, objects]) => {
    let value: unknown = 0;
    for (let i = 0; i < depth; i++) value = objects ? { a: value } : [value];
    return value;
  });
}

/** CEL that compiles with the step variables (some fail at run time only, e.g. on input they do not find). */
const VALID_CEL: readonly string[] = [
  'true', 'false', '1 == 1', 'input.x > 1', "has(input.a) && input.a == 'b'", 'size(input) > 0', 'input.n + 1.0 > 2.0',
  "previous_step_outputs['A'].ok == true", "previous_step_content.arguments.x == 'y'", 'loop_state.iteration < 3',
  'loop_state == null', 'user_input == null', 'additional_data.triggerSource == "manual"', "session_state['k'] == 1",
  'input.l.map(x, x * 2.0)', "input['__proto__'] == 1", "input['constructor'] != null", 'int(input.n) / 0 == 1',
  "'a'.matches('(a+)+$')", 'input.l.filter(x, input.l.exists(y, y < 0.0)).size()',
  'timestamp("2020-01-01T00:00:00Z") < timestamp("2021-01-01T00:00:00Z")', "'😀'.size() == 1", '"\\u0000" == "a"',
];

/** CEL that does not compile (syntax, unknown variables, a router variable elsewhere, limits). */
const INVALID_CEL: readonly string[] = [
  '', ' ', '1 +', '((1)', 'input.', 'unknown_variable > 1', 'step_choices[0]', "'unterminated", '1 ? 2', 'a b c', '\u0000',
  'input.x = 1', 'function() {}', '"\\ud800"', 'b"\\xff"', '0x7fffffffffffffff + 1', '9223372036854775807 + 1', 'loop.x',
];

const CEL_TOKENS: readonly string[] = [
  'input', 'previous_step_outputs', 'previous_step_content', 'loop_state', 'user_input', 'step_choices', 'session_state',
  'additional_data', 'x', 'a', '.', '[', ']', '(', ')', '{', '}', ',', ':', '?', '"a"', "'b'", '1', '2.5', '1u', '-3',
  '+', '-', '*', '/', '%', '==', '!=', '<', '<=', '>=', '&&', '||', '!', 'in', 'true', 'false', 'null', 'size', 'has',
  'map', 'filter', 'all', 'exists', 'exists_one', 'matches', 'int', 'double', 'string', 'bytes', 'timestamp', 'duration',
];

/** A CEL expression: mostly one that compiles; else one that does not, a token soup, random text, or one at a limit (length 4,096, 32 brackets, 128 tree levels). */
export function celExpression(): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...VALID_CEL), weight: 12 },
    { arbitrary: fc.constantFrom(...INVALID_CEL), weight: 2 },
    { arbitrary: fc.array(fc.constantFrom(...CEL_TOKENS), { minLength: 1, maxLength: 12 }).map((t) => t.join(' ')), weight: 2 },
    { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    {
      arbitrary: fc.oneof(
        fc.integer({ min: 30, max: 600 }).map((n) => `${'('.repeat(n)}1${')'.repeat(n)}`),
        fc.integer({ min: 100, max: 400 }).map((n) => `1${' + 1'.repeat(n)}`),
        fc.integer({ min: 4_090, max: 4_100 }).map((n) => `'${'x'.repeat(n - 2)}'`),
        fc.integer({ min: 30, max: 200 }).map((n) => `${'!'.repeat(n)}true`),
        fc.integer({ min: 30, max: 200 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
      ),
      weight: 1,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Values of a JSON Schema

export interface SchemaArbitraryOptions {
  /** Arbitraries used instead of the schema's for properties with these names, at any depth. */
  overrides?: Readonly<Record<string, Arbitrary<unknown>>>;
  /** `$ref` levels followed before arrays of references are generated empty (default 2). */
  maxRefDepth?: number;
  /** Longest array generated (default 3; a smaller `maxItems` of the schema wins). */
  maxItems?: number;
  /** Longest string generated without a pattern (default 24); a larger `maxLength` is reached as a boundary case. */
  maxStringLength?: number;
  /**
   * Sometimes (1 in 10) a value just past a bound of the schema instead: an integer or number one
   * below its minimum or above its maximum, a string one longer than its `maxLength`. Such values
   * are no longer valid: the service must refuse them cleanly.
   */
  outOfRange?: boolean;
}

/** Largest safe bounds for unbounded integers (fast-check integers are 32-bit). */
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/** True when `schema` is a reference (arrays of them are cut off at the depth limit). */
function isRef(schema: JsonSchema | undefined): boolean {
  return typeof schema?.['$ref'] === 'string';
}

/**
 * Values valid against `schema` (a TypeBox schema; JSON Schema as TypeBox writes it), with the
 * given overrides. Optional properties are present or absent at random; `additionalProperties`
 * objects without properties are free-form {@link jsonObject}s; `{}` (Type.Unknown) is any
 * {@link jsonValue}.
 */
export function schemaArbitrary(schema: JsonSchema, options: SchemaArbitraryOptions = {}): Arbitrary<unknown> {
  const { overrides = {}, maxRefDepth = 2, maxItems = 3, maxStringLength = 24, outOfRange = false } = options;
  /** `valid`, or (when `outOfRange`, 1 in 10) one of `beyond`. */
  const orBeyond = <T>(valid: Arbitrary<T>, beyond: T[]): Arbitrary<T> =>
    outOfRange && beyond.length > 0 ? fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: fc.constantFrom(...beyond), weight: 1 }) : valid;

  const build = (s: JsonSchema, defs: Readonly<Record<string, JsonSchema>>, refDepth: number): Arbitrary<unknown> => {
    if (s['$defs']) defs = { ...defs, ...s['$defs'] };
    if (typeof s['$ref'] === 'string') {
      const name = s['$ref'].replace(/^#\/\$defs\//, '');
      const target = defs[name];
      if (!target) throw new Error(`schemaArbitrary: unresolved $ref '${s['$ref']}'`);
      return build(target, defs, refDepth + 1);
    }
    if ('const' in s) return fc.constant(s['const']);
    if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
    if (Array.isArray(s['anyOf'])) return fc.oneof(...(s['anyOf'] as JsonSchema[]).map((branch) => build(branch, defs, refDepth)));
    switch (s['type']) {
      case 'object': {
        const properties = (s['properties'] ?? {}) as Record<string, JsonSchema>;
        const names = Object.keys(properties);
        if (names.length === 0) return s['additionalProperties'] === false ? fc.constant({}) : jsonObject();
        const model: Record<string, Arbitrary<unknown>> = {};
        for (const name of names) model[name] = overrides[name] ?? build(properties[name]!, defs, refDepth);
        const required = ((s['required'] ?? []) as string[]).filter((name) => name in model);
        return fc.record(model, { requiredKeys: required });
      }
      case 'array': {
        const items = (s['items'] ?? {}) as JsonSchema;
        const minLength = s['minItems'] ?? 0;
        if (isRef(items) && refDepth >= maxRefDepth && minLength === 0) return fc.constant([]);
        const maxLength = Math.max(minLength, Math.min(s['maxItems'] ?? maxItems, maxItems));
        const item = build(items, defs, refDepth);
        return s['uniqueItems'] ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) }) : fc.array(item, { minLength, maxLength });
      }
      case 'string': {
        const minLength: number = s['minLength'] ?? 0;
        const declaredMax: number | undefined = s['maxLength'];
        if (typeof s['pattern'] === 'string') {
          return fc.stringMatching(new RegExp(s['pattern'])).filter((v) => v.length >= minLength && (declaredMax === undefined || v.length <= declaredMax));
        }
        const maxLength = Math.max(minLength, Math.min(declaredMax ?? maxStringLength, maxStringLength));
        const text = fc
          .oneof({ arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }), weight: 4 }, { arbitrary: fc.string({ minLength, maxLength, unit: unicodeChar }), weight: 1 })
          .filter((v) => v.length >= minLength && (declaredMax === undefined || v.length <= declaredMax));
        // The longest string allowed, as a boundary case.
        const longest = declaredMax !== undefined && declaredMax > maxStringLength ? fc.oneof({ arbitrary: text, weight: 9 }, { arbitrary: fc.constant('y'.repeat(declaredMax)), weight: 1 }) : text;
        return orBeyond(longest, declaredMax !== undefined ? ['z'.repeat(declaredMax + 1)] : []);
      }
      case 'integer': {
        const min = Math.max(INT_MIN, s['minimum'] ?? (s['exclusiveMinimum'] !== undefined ? s['exclusiveMinimum'] + 1 : INT_MIN));
        const max = Math.min(INT_MAX, s['maximum'] ?? (s['exclusiveMaximum'] !== undefined ? s['exclusiveMaximum'] - 1 : INT_MAX));
        const beyond = [...(min > INT_MIN ? [min - 1] : []), ...(max < INT_MAX ? [max + 1] : []), min + 0.5];
        return orBeyond<number>(fc.integer({ min, max }), beyond);
      }
      case 'number': {
        const min = s['minimum'] ?? s['exclusiveMinimum'] ?? -1e12;
        const max = s['maximum'] ?? s['exclusiveMaximum'] ?? 1e12;
        const valid = fc.double({ min, max, minExcluded: s['exclusiveMinimum'] !== undefined, maxExcluded: s['exclusiveMaximum'] !== undefined, noNaN: true });
        const beyond = [...(s['exclusiveMinimum'] !== undefined ? [s['exclusiveMinimum']] : s['minimum'] !== undefined ? [s['minimum'] - 1] : []), ...(s['maximum'] !== undefined ? [s['maximum'] + 1] : [])];
        return orBeyond<number>(valid, beyond);
      }
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      default:
        return jsonValue();
    }
  };
  return build(schema, {}, 0);
}

// ---------------------------------------------------------------------------------------------
// Mutations

/** A copy of a JSON value (own `__proto__` keys survive: JSON.parse defines them as own properties). */
function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Every path of `value` (the root first), breadth-first, at most `limit`. */
export function jsonPaths(value: unknown, limit = 300): JsonPath[] {
  const paths: JsonPath[] = [];
  const queue: Array<[unknown, JsonPath]> = [[value, []]];
  while (queue.length > 0 && paths.length < limit) {
    const [current, path] = queue.shift()!;
    paths.push(path);
    if (Array.isArray(current)) current.forEach((item, i) => queue.push([item, [...path, i]]));
    else if (current !== null && typeof current === 'object') for (const [key, item] of Object.entries(current)) queue.push([item, [...path, key]]);
  }
  return paths;
}

function setOwn(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** One way to break a value at one place. */
type Mutation =
  | { kind: 'delete' }
  | { kind: 'replace'; value: unknown }
  | { kind: 'addKey'; key: string; value: unknown }
  | { kind: 'wrap' }
  | { kind: 'stringify' };

/** Values of the wrong type, out of range, huge or deep. */
export function wrongValue(): Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 31, 2 ** 53 + 2, '', ' ', '0', 'true', 'null', [], {}, [null], { '': '' }), weight: 6 },
    { arbitrary: jsonScalar(true), weight: 3 },
    { arbitrary: jsonValue({ maxDepth: 2, hostile: true }), weight: 2 },
    { arbitrary: hugeString(), weight: 1 },
    { arbitrary: deepValue(), weight: 1 },
  );
}

function mutation(): Arbitrary<Mutation> {
  return fc.oneof(
    { arbitrary: fc.constant<Mutation>({ kind: 'delete' }), weight: 3 },
    { arbitrary: wrongValue().map((value): Mutation => ({ kind: 'replace', value })), weight: 5 },
    {
      arbitrary: fc
        .tuple(jsonKey(true), fc.oneof(jsonValue({ maxDepth: 2 }), fc.constant({ prototype: { polluted: true } })))
        .map(([key, value]): Mutation => ({ kind: 'addKey', key, value })),
      weight: 3,
    },
    { arbitrary: fc.constant<Mutation>({ kind: 'wrap' }), weight: 1 },
    { arbitrary: fc.constant<Mutation>({ kind: 'stringify' }), weight: 1 },
  );
}

/** `value` with `m` applied at `path` (a copy; the root may become undefined: no body). */
function applyMutation(value: unknown, path: JsonPath, m: Mutation): unknown {
  const root = cloneJson(value);
  if (path.length === 0) {
    switch (m.kind) {
      case 'delete':
        return undefined;
      case 'replace':
        return m.value;
      case 'wrap':
        return [root];
      case 'stringify':
        return JSON.stringify(root) ?? 'undefined';
      case 'addKey':
        if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
          setOwn(root as Record<string, unknown>, m.key, m.value);
          return root;
        }
        return m.value;
    }
  }
  let parent = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const current = parent[last];
  switch (m.kind) {
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
      break;
    case 'replace':
      setOwn(parent, last, m.value);
      break;
    case 'wrap':
      setOwn(parent, last, [current]);
      break;
    case 'stringify':
      setOwn(parent, last, JSON.stringify(current) ?? 'undefined');
      break;
    case 'addKey':
      if (current !== null && typeof current === 'object' && !Array.isArray(current)) setOwn(current as Record<string, unknown>, m.key, m.value);
      else setOwn(parent, last, m.value);
      break;
  }
  return root;
}

/** Values of `base` broken in one to `maxMutations` places (each at a random path of the current value). */
export function mutated(base: Arbitrary<unknown>, maxMutations = 3): Arbitrary<unknown> {
  return fc
    .tuple(base, fc.array(fc.tuple(fc.nat(), mutation()), { minLength: 1, maxLength: maxMutations }))
    .map(([value, steps]) => {
      let current = value;
      for (const [index, m] of steps) {
        const paths = jsonPaths(current);
        if (paths.length === 0) break;
        current = applyMutation(current, paths[index % paths.length]!, m);
      }
      return current;
    });
}

/** Valid-shaped values of `base` (weight 3) or mutated ones (weight 2). */
export function validOrMutated(base: Arbitrary<unknown>): Arbitrary<unknown> {
  return fc.oneof({ arbitrary: base, weight: 3 }, { arbitrary: mutated(base), weight: 2 });
}

/** True when `value` holds a key the body guard refuses: `__proto__`, or `constructor` holding an object with `prototype`. */
export function hasPoisoningKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasPoisoningKey);
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') return true;
    if (key === 'constructor' && item !== null && typeof item === 'object' && Object.hasOwn(item, 'prototype')) return true;
    if (hasPoisoningKey(item)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Workflow definitions that follow the rules, with hostile details where asked
//
// `hostile: false` draws only what the rules allow (odd but legal names, keys, configs and CEL),
// so almost every tree is saved; `hostile: true` mixes in, at a low rate per node, what they
// refuse (unknown executor keys, malformed ids, CEL that does not compile, a humanReview that
// does not fit the node type, a description over 5,000 characters).

/** `good` always; `bad` too (1 in `1 + goodWeight`) when `hostile`. */
function sometimes<T>(hostile: boolean, good: Arbitrary<T>, bad: Arbitrary<T>, goodWeight = 15): Arbitrary<T> {
  return hostile ? fc.oneof({ arbitrary: good, weight: goodWeight }, { arbitrary: bad, weight: 1 }) : good;
}

/** Executor keys: the registry's (mostly echo); when `hostile`, unknown ones and names of Object.prototype members. */
export function executorKey(hostile = false): Arbitrary<string> {
  return sometimes(
    hostile,
    fc.oneof({ arbitrary: fc.constant('echo'), weight: 6 }, { arbitrary: fc.constantFrom('flaky', 'sleep', 'sum', 'echo-tool', 'write-file'), weight: 1 }),
    fc.constantFrom('nope', '', 'ECHO', 'echo ', 'toString', 'constructor', 'hasOwnProperty', '__proto__', 'builtin.echo'),
  );
}

/** Node names: plain, unicode, odd and long (names are free text). */
export function nodeName(): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme-ascii' }), weight: 6 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 6, unit: unicodeChar }), weight: 2 },
    { arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', '$', '$cel', '.', 'a.b', ' ', '😀', 'x'.repeat(500)), weight: 1 },
  );
}

/** Node ids: usually absent (generated), else pattern ones; when `hostile`, invalid ones. */
export function nodeId(hostile = false): Arbitrary<string | null | undefined> {
  return sometimes(
    hostile,
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), weight: 1 }),
    fc.constantFrom<string | null>(null, '', 'a b', 'x'.repeat(129), '__proto__', 'a:review', 'ä'),
  );
}

/** A CEL expression that compiles with the step variables. */
export function validCel(): Arbitrary<string> {
  return fc.constantFrom(...VALID_CEL);
}

/** Boolean CEL that evaluates on any run data (no missing key, no type error), so that runs get past it. */
const SAFE_CEL: readonly string[] = [
  'true', 'false', "has(input.x) && input.x == 1", '!has(input.a)', 'size(previous_step_outputs) >= 0', 'loop_state == null || loop_state.iteration < 2',
  'user_input == null', "additional_data.triggerSource == 'manual'", "type(input) == map",
];

/**
 * {@link validCel}; when `hostile`, sometimes any {@link celExpression}; when `executable`,
 * mostly {@link SAFE_CEL} (an expression that fails at run time fails its run before any gate).
 */
function treeCel(hostile: boolean, executable = false): Arbitrary<string> {
  const valid = executable ? fc.oneof({ arbitrary: fc.constantFrom(...SAFE_CEL), weight: 4 }, { arbitrary: validCel(), weight: 1 }) : validCel();
  return sometimes(hostile, valid, celExpression(), 8);
}

/** A router selector: one naming a choice through `step_choices` (or not); when `hostile`, sometimes any {@link celExpression}. */
export function routerCel(hostile = false, executable = false): Arbitrary<string> {
  const picks = executable
    ? fc.oneof({ arbitrary: fc.constantFrom('step_choices[0]', 'step_choices[size(step_choices) - 1]'), weight: 6 }, { arbitrary: fc.constantFrom("'nope'", 'input.route', 'true'), weight: 1 })
    : fc.constantFrom('step_choices[0]', "step_choices.size() > 1 ? step_choices[1] : 'x'", "'nope'", 'input.route', 'true');
  return sometimes(hostile, picks, celExpression(), 8);
}

/** A key of a step `config`: mostly plain, sometimes odd (legal: `$`, `.`, `constructor`, ...). */
function configKey(): Arbitrary<string> {
  return fc.oneof({ arbitrary: fc.string({ maxLength: 8, unit: 'grapheme-ascii' }), weight: 6 }, { arbitrary: fc.constantFrom(...ODD_KEYS.filter((k) => k !== '$cel' && k !== '$literal')), weight: 1 });
}

/**
 * A step `config`: data, `$cel` expressions and `$literal`s at any place; when `hostile`,
 * sometimes CEL that does not compile, or a `$cel` object with another key.
 */
export function stepConfig(hostile = false, executable = false): Arbitrary<Record<string, unknown>> {
  const cel = executable ? fc.oneof({ arbitrary: fc.constantFrom('input', 'previous_step_content', 'user_input', "size(previous_step_outputs)", "'x' + 'y'"), weight: 4 }, { arbitrary: validCel(), weight: 1 }) : treeCel(hostile);
  const value = fc.oneof(
    { arbitrary: jsonValue({ maxDepth: 2 }), weight: 8 },
    { arbitrary: cel.map((expression) => ({ $cel: expression })), weight: 3 },
    { arbitrary: jsonValue({ maxDepth: 2 }).map((v) => ({ $literal: v })), weight: 1 },
    { arbitrary: jsonValue({ maxDepth: 1 }).map((v) => ({ $literal: { $cel: v } })), weight: 1 },
    { arbitrary: cel.map((expression) => [{ deep: { $cel: expression } }]), weight: 1 },
    { arbitrary: fc.tuple(cel, jsonValue({ maxDepth: 1 })).map(([expression, v]) => ({ $cel: expression, other: v })), weight: hostile ? 1 : 0 },
  );
  return fc.dictionary(configKey(), value, { maxKeys: 4 });
}

const userInputField = fc.record(
  {
    name: fc.oneof(fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme-ascii' }), fc.constantFrom('constructor', 'toString', '$', 'a.b')),
    fieldType: fc.constantFrom('string', 'number', 'boolean', 'array'),
    description: fc.option(fc.string({ maxLength: 20 })),
    required: fc.boolean(),
    defaultValue: jsonValue({ maxDepth: 1 }),
    allowedValues: fc.option(fc.array(jsonScalar(), { maxLength: 3 })),
  },
  { requiredKeys: ['name', 'fieldType'] },
);

/** A humanReview block with every flag and policy drawn freely: many do not fit the node type (a 400). */
export function humanReview(): Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      requiresConfirmation: fc.boolean(),
      confirmationMessage: fc.option(fc.string({ maxLength: 30 })),
      requiresUserInput: fc.boolean(),
      userInputMessage: fc.option(fc.string({ maxLength: 30 })),
      userInputSchema: fc.option(fc.uniqueArray(userInputField, { maxLength: 3, selector: (f) => f.name })),
      requiresOutputReview: fc.boolean(),
      outputReviewMessage: fc.option(fc.string({ maxLength: 30 })),
      requiresIterationReview: fc.boolean(),
      onReject: fc.constantFrom('skip', 'cancel', 'retry', 'else_branch'),
      timeoutSeconds: fc.option(fc.oneof(fc.integer({ min: 1, max: 31_536_000 }), fc.double({ min: 0, max: 100, minExcluded: true, noNaN: true }))),
      onTimeout: fc.constantFrom('approve', 'skip', 'cancel'),
      maxRetries: fc.integer({ min: 0, max: 100 }),
      allowMultipleSelections: fc.boolean(),
    },
    { requiredKeys: [] },
  );
}

/** A humanReview block a step allows: confirmation, a form with fields, output review, with free messages and timeouts. */
export function stepReview(): Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      requiresConfirmation: fc.boolean(),
      confirmationMessage: fc.option(fc.string({ maxLength: 30 })),
      requiresUserInput: fc.boolean(),
      userInputSchema: fc.uniqueArray(userInputField, { minLength: 1, maxLength: 3, selector: (f) => f.name }),
      requiresOutputReview: fc.boolean(),
      onReject: fc.constantFrom('skip', 'cancel', 'retry'),
      timeoutSeconds: fc.option(fc.integer({ min: 1, max: 31_536_000 })),
      onTimeout: fc.constantFrom('approve', 'skip', 'cancel'),
      maxRetries: fc.integer({ min: 0, max: 100 }),
    },
    { requiredKeys: ['requiresUserInput', 'userInputSchema'] },
  );
}

const position = fc.option(fc.record({ x: fc.double({ noNaN: true, noDefaultInfinity: true }), y: fc.integer() }, { requiredKeys: [] }), { nil: undefined });

/** Names unique among siblings (parallel children and router choices need them). */
function uniqueByName<T extends Record<string, unknown>>(arb: Arbitrary<T>, minLength: number, maxLength: number): Arbitrary<T[]> {
  return fc.uniqueArray(arb, { minLength, maxLength, selector: (n) => n['name'] });
}

export interface TreeOptions {
  /** Containers nested at most this deep (default 3). */
  maxDepth?: number;
  /** Mix in what the rules refuse (see the section comment). */
  hostile?: boolean;
  /**
   * Trees a test can run quickly: steps only use the built-in `echo` executor (no MCP server, no
   * sleep, no failing executor with retry waits), no retry policy, loops of at most 3 iterations.
   */
  executable?: boolean;
}

/**
 * Node trees of every type, nested up to `maxDepth` containers, that follow the definition
 * rules (step executors, at least two parallel children with unique names, loop configs with
 * bounded nested iterations, condition and router CEL, router choices, humanReview where the
 * node type allows it) with odd names, configs and CEL throughout.
 */
export function workflowNode(options: TreeOptions = {}): Arbitrary<Record<string, unknown>> {
  const { maxDepth = 3, hostile = false, executable = false } = options;
  const iterations = executable
    ? fc.integer({ min: 1, max: 3 })
    : fc.oneof({ arbitrary: fc.integer({ min: 1, max: 10 }), weight: 6 }, { arbitrary: fc.integer({ min: 1, max: hostile ? 1000 : 300 }), weight: 1 });
  const { node } = fc.letrec<{ node: Record<string, unknown>; step: Record<string, unknown> }>((tie) => {
    const steps = (min: number, max: number) => fc.array(tie('node'), { minLength: min, maxLength: max });
    const base = { id: nodeId(hostile), name: nodeName(), position };
    const choices = uniqueByName(fc.record({ name: nodeName(), steps: steps(1, 2) }), 2, 3);
    return {
      step: fc.record(
        {
          ...base,
          nodeType: fc.constant('step'),
          executorKey: executable ? fc.constant('echo') : executorKey(hostile),
          config: fc.option(stepConfig(hostile, executable), { nil: undefined }),
          stepConfig: fc.option(
            executable
              ? fc.record<Record<string, unknown>>({ maxRetries: fc.constant(0), onError: fc.constantFrom('fail', 'skip') })
              : fc.record<Record<string, unknown>>({ maxRetries: fc.integer({ min: 0, max: 100 }), onError: fc.constantFrom('fail', 'skip', 'retry'), backoffBaseSeconds: fc.double({ min: 0.001, max: 86_400, noNaN: true }) }, { requiredKeys: [] }),
            { nil: undefined },
          ),
          humanReview: fc.option(sometimes(hostile, stepReview(), humanReview(), 6), { nil: undefined, freq: 2 }),
        },
        { requiredKeys: ['name', 'nodeType', 'executorKey'] },
      ),
      node: fc.oneof(
        { maxDepth, depthIdentifier: 'nodes', depthSize: 'small', withCrossShrink: true },
        tie('step'),
        fc.record({ ...base, nodeType: fc.constant('parallel'), children: uniqueByName(tie('node'), 2, 3) }, { requiredKeys: ['name', 'nodeType', 'children'] }),
        fc.record(
          {
            ...base,
            nodeType: fc.constant('loop'),
            loopConfig: fc.record(
              {
                maxIterations: iterations,
                endConditionCel: fc.option(treeCel(hostile, executable)),
              },
              { requiredKeys: ['maxIterations'] },
            ),
            children: steps(1, 2),
            humanReview: fc.option(fc.record({ requiresIterationReview: fc.boolean(), requiresConfirmation: fc.boolean() }), { nil: undefined, freq: 3 }),
          },
          { requiredKeys: ['name', 'nodeType', 'loopConfig', 'children'] },
        ),
        fc.record(
          {
            ...base,
            nodeType: fc.constant('condition'),
            conditionCel: treeCel(hostile, executable),
            trueSteps: steps(1, 2),
            falseSteps: steps(0, 2),
            humanReview: fc.option(fc.record({ requiresConfirmation: fc.boolean(), onReject: fc.constantFrom('skip', 'cancel', 'else_branch') }), { nil: undefined, freq: 3 }),
          },
          { requiredKeys: ['name', 'nodeType', 'conditionCel', 'trueSteps'] },
        ),
        // A router picks its route by CEL (a confirmation or a review of it allowed), or a person picks it (route selection).
        fc.record(
          {
            ...base,
            nodeType: fc.constant('router'),
            choices,
            conditionCel: routerCel(hostile, executable),
            humanReview: fc.option(fc.record({ requiresConfirmation: fc.boolean(), requiresOutputReview: fc.boolean() }), { nil: undefined, freq: 2 }),
          },
          { requiredKeys: ['name', 'nodeType', 'choices', 'conditionCel'] },
        ),
        fc.record(
          {
            ...base,
            nodeType: fc.constant('router'),
            choices,
            humanReview: fc.record({ requiresUserInput: fc.constant(true), allowMultipleSelections: fc.boolean(), requiresOutputReview: fc.boolean() }),
          },
          { requiredKeys: ['name', 'nodeType', 'choices', 'humanReview'] },
        ),
      ),
    };
  });
  return node;
}

/** Tags that match the pattern. */
export function workflowTags(): Arbitrary<string[]> {
  return fc.array(fc.stringMatching(/^[A-Za-z0-9 _.:/-]{1,20}$/), { maxLength: 4 });
}

/** A create body whose nodes follow the rules (see {@link workflowNode}); `name` ends with a random suffix, so names rarely clash. */
export function workflowBody(options: TreeOptions = {}): Arbitrary<Record<string, unknown>> {
  const description = fc.option(sometimes(options.hostile === true, fc.string({ maxLength: 40 }), fc.constantFrom('d'.repeat(5000), 'd'.repeat(5001))));
  return fc.record(
    {
      name: fc.tuple(nodeName(), fc.stringMatching(/^[0-9a-f]{8}$/)).map(([name, suffix]) => `${name.slice(0, 180)} ${suffix}`),
      description,
      canvas: fc.record({ viewport: fc.record({ x: fc.integer(), y: fc.integer(), zoom: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 10, minExcluded: true, noNaN: true })) }, { requiredKeys: [] }) }),
      nodes: fc.array(workflowNode(options), { minLength: 1, maxLength: 3 }),
      tags: workflowTags(),
    },
    { requiredKeys: ['name', 'canvas', 'nodes'] },
  );
}

// ---------------------------------------------------------------------------------------------
// Query strings and path segments

/** Query values: what the schema wants, and what it does not. */
export function queryValue(): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom('', '0', '1', '2', '-1', '100', '101', '1000', '1000000', '1000001', '1e3', '0x10', '1.5', ' 1', 'NaN', 'Infinity', '99999999999999999999', 'true', 'false', 'null', '[]', '{}'), weight: 5 },
    { arbitrary: fc.string({ maxLength: 12 }), weight: 3 },
    { arbitrary: fc.stringMatching(/^[0-9a-fA-F]{24}$/), weight: 1 },
    { arbitrary: fc.constant('x'.repeat(3_000)), weight: 1 },
  );
}

/**
 * A query string for `params` (name -> value, several values repeat the name): encoded with
 * encodeURIComponent, or raw with broken percent escapes and separators.
 */
export function queryString(params: Arbitrary<Record<string, unknown>>): Arbitrary<string> {
  const raw = fc.constantFrom('%', '%E0%A4%A', '%zz', '%00', '&&', '=', '==', '&=&', '+', '%2B', '%26', '#', '?', '[]', 'a[b]=1', 'page[]=1', '__proto__=1', 'constructor[prototype][x]=1');
  const extras = fc.oneof({ arbitrary: fc.constant([]), weight: 3 }, { arbitrary: fc.array(fc.tuple(jsonKey(), queryValue()), { minLength: 1, maxLength: 2 }), weight: 1 });
  const junks = fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: raw, weight: 1 });
  return fc.tuple(params, extras, junks).map(([record, extra, junk]) => {
    const parts: string[] = [];
    const add = (name: string, value: unknown) => parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value) ?? '')}`);
    for (const [name, value] of Object.entries(record)) {
      if (Array.isArray(value)) for (const item of value) add(name, item);
      else add(name, value);
    }
    for (const [name, value] of extra) add(name, value);
    if (junk !== null) parts.push(junk);
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  });
}

/** Query records of `schema` (values as the schema wants them), in two of five one or two values replaced by a wrong one or repeated. */
export function queryParams(schema: JsonSchema, overrides: Readonly<Record<string, Arbitrary<unknown>>> = {}): Arbitrary<Record<string, unknown>> {
  const valid = schemaArbitrary(schema, { overrides, maxStringLength: 12, outOfRange: true }) as Arbitrary<Record<string, unknown>>;
  const change = fc.tuple(fc.nat(), fc.oneof({ arbitrary: queryValue(), weight: 3 }, { arbitrary: fc.array(queryValue(), { minLength: 2, maxLength: 3 }), weight: 1 }));
  const changes = fc.oneof({ arbitrary: fc.constant([]), weight: 3 }, { arbitrary: fc.array(change, { minLength: 1, maxLength: 2 }), weight: 2 });
  return fc.tuple(valid, changes).map(([record, changes]) => {
    const names = Object.keys(schema['properties'] ?? {});
    const result: Record<string, unknown> = { ...record };
    for (const [index, value] of changes) result[names[index % names.length]!] = value;
    return result;
  });
}

/** A path segment where an id belongs that names nothing here: another 24-hex id, or malformed or percent-encoded text. */
export function otherId(): Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.stringMatching(/^[0-9a-f]{24}$/), weight: 3 },
    { arbitrary: fc.constantFrom('nope', '0', 'x'.repeat(200), 'ZZZZZZZZZZZZZZZZZZZZZZZZ', '%E0%A4%A', '%2F', '%00', '__proto__', '0123456789ABCDEF01234567', '%20'), weight: 2 },
    // Not empty and not a dot segment (`.`, `..`, `%2E%2E`): those make the URL another route's (`/runs/` is the run list).
    { arbitrary: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s !== '.' && s !== '..').map(encodeURIComponent), weight: 1 },
  );
}
