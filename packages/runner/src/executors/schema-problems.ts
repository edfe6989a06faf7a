/**
 * TypeBox validation errors as registry problems: one `"<json path>: <what is wrong>"` line per
 * wrong value, phrased for the person editing the file (`is required`, `must be a string, got
 * number 3`, `unknown property (allowed: kind, name)`) rather than in JSON Schema terms.
 *
 * Schemas may carry two annotations this module reads:
 * - `problem`: the whole expectation, e.g. `must be an http: or https: URL` (followed by `, got ...`);
 * - `unit`: what a number counts, e.g. `seconds` (`must be a number of seconds in 1..86400`).
 */
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';

/** Problems of `value` against `schema`; `where` is the JSON path of `value` (e.g. `$.executors.hook`). Empty when valid. */
export function schemaProblems(schema: TSchema, value: unknown, where: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const add = (problem: string): void => {
    if (seen.has(problem)) return;
    seen.add(problem);
    problems.push(problem);
  };
  /** Paths whose value already has a problem: further keywords failing there add nothing. */
  const valueProblemAt = new Set<string>();
  for (const error of Value.Errors(schema, value)) {
    const { path, value: at } = locate(value, error.instancePath, where);
    const params = error.params as Record<string, unknown>;
    const subschema = schemaAt(schema, error.schemaPath);
    switch (error.keyword) {
      case 'required':
        for (const key of stringList(params['requiredProperties'])) add(`${jsonPath(path, key)}: is required`);
        break;
      case 'additionalProperties': {
        const allowed = Object.keys(asRecord(subschema?.['properties']) ?? {});
        for (const key of stringList(params['additionalProperties'])) add(`${jsonPath(path, key)}: unknown property (allowed: ${allowed.join(', ')})`);
        break;
      }
      case 'boolean':
        // `additionalProperties: false` failing for one key; reported by the keyword above.
        break;
      default:
        if (valueProblemAt.has(path)) break;
        valueProblemAt.add(path);
        add(`${path}: ${expectation(subschema, at, error.message)}`);
    }
  }
  return problems;
}

/** How a value should look according to `schema`, and what it is instead. */
function expectation(schema: Record<string, unknown> | undefined, value: unknown, fallback: string): string {
  const got = `got ${describe(value)}`;
  if (schema === undefined) return fallback;
  if (typeof schema['problem'] === 'string') return `${schema['problem']}, ${got}`;
  if (Array.isArray(schema['enum'])) return `must be one of ${schema['enum'].map((v) => JSON.stringify(v)).join(', ')}, ${got}`;
  if ('const' in schema) return `must be ${JSON.stringify(schema['const'])}, ${got}`;
  switch (schema['type']) {
    case 'string': {
      if (typeof value !== 'string') return `must be a string, ${got}`;
      const min = schema['minLength'];
      if (typeof min === 'number' && value.length < min) return min === 1 ? 'must not be empty' : `must have at least ${min} characters`;
      const max = schema['maxLength'];
      if (typeof max === 'number' && value.length > max) return `must have at most ${max} characters`;
      return typeof schema['pattern'] === 'string' ? `must match ${schema['pattern']}, ${got}` : fallback;
    }
    case 'integer':
    case 'number':
      return `must be ${numberShape(schema)}, ${got}`;
    case 'boolean':
      return `must be true or false, ${got}`;
    case 'object':
      return `must be an object, ${got}`;
    case 'array': {
      const items = asRecord(schema['items']);
      return `must be an array${items?.['type'] === 'string' ? ' of strings' : ''}, ${got}`;
    }
    default:
      return `${fallback}, ${got}`;
  }
}

/** `an integer number of milliseconds in 1..2147483647`, `a number of seconds in 1..86400`, `a number > 0`. */
function numberShape(schema: Record<string, unknown>): string {
  const unit = typeof schema['unit'] === 'string' ? ` number of ${schema['unit']}` : '';
  const noun = schema['type'] === 'integer' ? `an integer${unit}` : `a${unit ? '' : ' number'}${unit}`;
  const { minimum: min, maximum: max, exclusiveMinimum: above } = schema;
  if (typeof min === 'number' && typeof max === 'number') return `${noun} in ${min}..${max}`;
  const bounds = [
    typeof min === 'number' ? `>= ${min}` : undefined,
    typeof above === 'number' ? `> ${above}` : undefined,
    typeof max === 'number' ? `<= ${max}` : undefined,
  ].filter((bound) => bound !== undefined);
  return bounds.length === 0 ? noun : `${noun} ${bounds.join(' and ')}`;
}

/** The JSON path and value an error's `instancePath` (a JSON pointer) points at inside `root`. */
function locate(root: unknown, pointer: string, where: string): { path: string; value: unknown } {
  let path = where;
  let value = root;
  for (const segment of pointerSegments(pointer)) {
    const parent = value;
    if (Array.isArray(parent) && /^\d+$/.test(segment)) {
      path = jsonPath(path, Number(segment));
      value = parent[Number(segment)];
    } else {
      path = jsonPath(path, segment);
      value = asRecord(parent)?.[segment];
    }
  }
  return { path, value };
}

/** The subschema a `schemaPath` (`#/properties/h/patternProperties/^.*$`) names inside `root`. */
function schemaAt(root: TSchema, schemaPath: string): Record<string, unknown> | undefined {
  let schema: unknown = root;
  for (const segment of pointerSegments(schemaPath.replace(/^#/, ''))) schema = asRecord(schema)?.[segment];
  return asRecord(schema);
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `parent.key`, `parent["odd key"]` or `parent[3]`. */
export function jsonPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** `null`, `an array`, `an object`, `number 3`, `string "x"`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
