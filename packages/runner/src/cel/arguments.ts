/**
 * How run data gets into executor arguments: one expression language, CEL, inside the step's
 * free-form `config` object, which is the tool's arguments object.
 *
 * Within `config` (at any depth, through objects and arrays):
 * - an object whose only key is `"$cel"`, with a string value, is replaced by the result of that
 *   expression (as plain JSON): `{"email": {"$cel": "input.user.email"}}`;
 * - an object whose only key is `"$literal"` is replaced by that key's value, verbatim and not
 *   looked into: `{"$literal": {"$cel": "not evaluated"}}` passes `{"$cel": "not evaluated"}`;
 * - everything else is copied unchanged.
 * The top-level `config` object itself is the arguments object and is never replaced. Results of
 * expressions are not looked into either: data cannot inject expressions.
 *
 * Save time: {@link checkArgumentExpressions} (or {@link listArgumentExpressions} plus
 * {@link findArgumentProblems}) reports objects that look like markers but are not: a `"$cel"`
 * that is not a string, `"$cel"`/`"$literal"` next to other keys, or at the top level. At run
 * time those are copied unchanged, like any other object.
 *
 * Paths name places in the config as `config.user.email`, `config.items[0]`, `config["a.b"]`.
 */
import type { CelEngine } from './cel-engine.ts';
import { CelEvaluationError } from './cel-evaluation-error.ts';
import { childPath } from './json-path.ts';
import { isPlainObject } from './plain-object.ts';

/** Key of an expression marker: `{"$cel": "input.user.email"}`. */
export const CEL_MARKER = '$cel';
/** Key of a literal marker: `{"$literal": <any JSON, passed verbatim>}`. */
export const LITERAL_MARKER = '$literal';

/** A `$cel` expression in a config, and where it is (`config.user.email`). */
export interface ArgumentExpression {
  readonly path: string;
  readonly expression: string;
}

/** A save-time problem in a config: where (`config.user`) and what, in a sentence. */
export interface ArgumentExpressionProblem {
  readonly path: string;
  readonly message: string;
}

const ROOT = 'config';

/**
 * Builds a tool's arguments from a step's `config`, evaluating every `$cel` expression with
 * `variables` (see {@link CelEngine.evaluate}) and unwrapping every `$literal`. Parts without
 * markers are shared with `config`, not copied, and a config without markers is returned as is:
 * treat both as immutable. All the expressions share one evaluation budget.
 * @throws CelEvaluationError when an expression fails; its `path` and message name the place in
 *   the config (`config.user.email: CEL expression \`input.user.email\` failed: ...`).
 */
export function resolveArguments(
  config: Record<string, unknown>,
  variables: Readonly<Record<string, unknown>>,
  engine: CelEngine,
): Record<string, unknown> {
  const budget = engine.newBudget(); // one budget for all of the step's expressions
  const evaluate = (expression: string, path: string): unknown => {
    try {
      return engine.evaluate(expression, variables, budget);
    } catch (error) {
      throw error instanceof CelEvaluationError ? error.atPath(path) : error;
    }
  };
  return resolveEntries(config, ROOT, evaluate);
}

/** True when `config` contains at least one `$cel` expression (a `$literal` alone does not count). */
export function hasExpressions(config: unknown): boolean {
  for (const found of markers(config)) {
    if (found.kind === 'expression') return true;
  }
  return false;
}

/** Every `$cel` expression (string) in `config`, with its path, in document order. */
export function listArgumentExpressions(config: unknown): ArgumentExpression[] {
  return [...markers(config)].flatMap((marker) => (marker.kind === 'expression' ? [{ path: marker.path, expression: marker.expression }] : []));
}

/**
 * Objects in `config` that look like markers but are not: `"$cel"` with a non-string value,
 * `"$cel"` or `"$literal"` next to other keys, or at the top level of `config`. Each would be
 * passed to the tool unchanged, which is almost certainly not what the author meant.
 */
export function findArgumentProblems(config: unknown): ArgumentExpressionProblem[] {
  return [...markers(config)].flatMap((marker) => (marker.kind === 'problem' ? [{ path: marker.path, message: marker.message }] : []));
}

/**
 * Save-time check of a step's `config`: {@link findArgumentProblems}, plus every `$cel`
 * expression checked with `engine` against `variables` (e.g. `STEP_VARIABLES`).
 * @returns every problem, `[]` when the config is valid.
 */
export function checkArgumentExpressions(config: unknown, variables: readonly string[], engine: CelEngine): ArgumentExpressionProblem[] {
  const invalid = listArgumentExpressions(config).flatMap(({ path, expression }) => {
    const result = engine.check(expression, variables);
    return result.ok ? [] : [{ path, message: result.message }];
  });
  return [...findArgumentProblems(config), ...invalid];
}

type Marker = { kind: 'cel'; expression: unknown } | { kind: 'literal'; value: unknown };

/** The marker `object` is, when its only key is `$cel` or `$literal`. */
function markerOf(object: Record<string, unknown>): Marker | undefined {
  const keys = Object.keys(object);
  if (keys.length !== 1) return undefined;
  if (keys[0] === CEL_MARKER) return { kind: 'cel', expression: object[CEL_MARKER] };
  if (keys[0] === LITERAL_MARKER) return { kind: 'literal', value: object[LITERAL_MARKER] };
  return undefined;
}

type Evaluate = (expression: string, path: string) => unknown;

function resolveValue(value: unknown, path: string, evaluate: Evaluate): unknown {
  if (Array.isArray(value)) {
    const resolved = value.map((element: unknown, index) => resolveValue(element, childPath(path, index), evaluate));
    return resolved.some((element, index) => element !== value[index]) ? resolved : value;
  }
  if (!isPlainObject(value)) return value;
  const marker = markerOf(value);
  if (marker?.kind === 'literal') return marker.value;
  if (marker?.kind === 'cel' && typeof marker.expression === 'string') return evaluate(marker.expression, path);
  return resolveEntries(value, path, evaluate);
}

function resolveEntries(object: Record<string, unknown>, path: string, evaluate: Evaluate): Record<string, unknown> {
  const entries = Object.entries(object).map(([key, value]) => [key, resolveValue(value, childPath(path, key), evaluate)] as const);
  // Object.fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return entries.some(([key, value]) => value !== object[key]) ? Object.fromEntries(entries) : object;
}

type Found = { kind: 'expression'; path: string; expression: string } | { kind: 'problem'; path: string; message: string };

/** The expressions and would-be markers of a config, lazily, in document order. */
function* markers(config: unknown): Generator<Found> {
  if (!isPlainObject(config)) return;
  const markerKeys = markerKeysOf(config);
  if (markerKeys !== undefined) {
    yield {
      kind: 'problem',
      path: ROOT,
      message:
        `${markerKeys} is not recognized at the top level: config is the tool's arguments object, so this is an argument ` +
        'named so; put expressions in argument values, e.g. {"text": {"$cel": "input.text"}}',
    };
  }
  yield* entryMarkers(config, ROOT);
}

function* valueMarkers(value: unknown, path: string): Generator<Found> {
  if (Array.isArray(value)) {
    for (const [index, element] of value.entries()) yield* valueMarkers(element, childPath(path, index));
    return;
  }
  if (!isPlainObject(value)) return;
  const marker = markerOf(value);
  if (marker?.kind === 'literal') return;
  if (marker?.kind === 'cel') {
    if (typeof marker.expression === 'string') {
      yield { kind: 'expression', path, expression: marker.expression };
      return;
    }
    yield {
      kind: 'problem',
      path,
      message: `"$cel" must be a string (a CEL expression), got ${jsonTypeName(marker.expression)}; to pass this object as is, wrap it: {"$literal": ...}`,
    };
  } else {
    const markerKeys = markerKeysOf(value);
    if (markerKeys !== undefined) {
      yield {
        kind: 'problem',
        path,
        message:
          `${markerKeys} only works as the single key of an object, and this object has other keys, so it would be passed as is; ` +
          'move the expression into an object of its own, or wrap this object in {"$literal": ...} to pass it verbatim',
      };
    }
  }
  yield* entryMarkers(value, path);
}

function* entryMarkers(object: Record<string, unknown>, path: string): Generator<Found> {
  for (const [key, value] of Object.entries(object)) yield* valueMarkers(value, childPath(path, key));
}

/** `"$cel"`, `"$literal"` or `"$cel" and "$literal"`, as present among the keys of `object`; undefined when neither is. */
function markerKeysOf(object: Record<string, unknown>): string | undefined {
  const present = [CEL_MARKER, LITERAL_MARKER].filter((key) => Object.hasOwn(object, key));
  return present.length === 0 ? undefined : present.map((key) => `"${key}"`).join(' and ');
}

function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}
