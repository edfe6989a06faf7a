/**
 * Declared workflow inputs (issue #21 item 3): a workflow's optional `inputSchema`, a JSON Schema
 * (draft 2020-12) the run input (`initialInput`) must match. The one validator of run inputs, used
 * by the API (trigger, dry run; later schedules, event triggers) and by the MCP bridge (its
 * run_workflow tools check `parameters` before calling the API). Imported as
 * `@switchyard/domain/input-schema` (not from the package index, so that code not checking inputs
 * does not load ajv).
 *
 * - {@link checkInputSchema}: is a schema acceptable at all? A JSON object of at most
 *   {@link MAX_INPUT_SCHEMA_BYTES} bytes as JSON and {@link MAX_INPUT_SCHEMA_DEPTH} levels, without
 *   `$id` and with local `$ref`s only (`#...`: nothing is ever fetched), that ajv compiles in strict
 *   mode (unknown keywords and formats are refused).
 * - {@link validateRunInput}: the input with the schema's `default`s applied, or its problems, each
 *   a JSON pointer and what is wrong (`/customerEmail: is required`). Compiled schemas are cached
 *   by workflow id and version ({@link MAX_CACHED_VALIDATORS}, least recently used dropped).
 *
 * Known limit: `pattern` and `patternProperties` are JavaScript regular expressions run on the
 * input; a pathological pattern (written by a workflow editor) can be slow on a long input string.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { jsonDepth } from './mapping.ts';

/** Largest `inputSchema`, bytes of its JSON text (UTF-8). */
export const MAX_INPUT_SCHEMA_BYTES = 16 * 1024;

/** Deepest `inputSchema`: nesting levels of its JSON (`{}` is 1). */
export const MAX_INPUT_SCHEMA_DEPTH = 32;

/** Most compiled input schemas kept (one per workflow id and version). */
export const MAX_CACHED_VALIDATORS = 500;

/** What {@link validateRunInput} needs of a workflow: its id and version (the cache key) and its schema (null: no declared inputs). */
export interface InputSchemaOwner {
  id: string;
  version: number;
  inputSchema?: Record<string, unknown> | null;
}

/** The result of {@link validateRunInput}: the input with defaults applied, or its problems (`/path: message`, at least one). */
export type RunInputCheck = { ok: true; input: Record<string, unknown> } | { ok: false; problems: string[] };

/**
 * Problems of `schema` as a workflow's `inputSchema`, each prefixed with its place
 * (`/inputSchema: ...`, `/inputSchema/properties/a/$ref: ...`); [] when it is acceptable.
 * Never throws.
 */
export function checkInputSchema(schema: unknown): string[] {
  const at = '/inputSchema';
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [`${at}: must be a JSON object (a JSON Schema, draft 2020-12)`];
  const bytes = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (bytes > MAX_INPUT_SCHEMA_BYTES) return [`${at}: is ${bytes} bytes as JSON, more than the limit of ${MAX_INPUT_SCHEMA_BYTES}`];
  if (jsonDepth(schema) > MAX_INPUT_SCHEMA_DEPTH) return [`${at}: nests deeper than ${MAX_INPUT_SCHEMA_DEPTH} levels`];
  const problems = referenceProblems(schema, at);
  if (problems.length > 0) return problems;
  try {
    const ajv = ajvInstance();
    ajv.removeSchema(ajv.compile(schema).schema as object);
    return [];
  } catch (error) {
    return [`${at}: ${error instanceof Error ? error.message : String(error)}`];
  }
}

/**
 * Checks `input` against `workflow.inputSchema`. Without a schema the input is returned as is.
 * Otherwise a copy of it gets the schema's `default`s (the caller's object is not changed) and is
 * returned, or every problem is (`allErrors`). The schema must have passed
 * {@link checkInputSchema} (as every stored one has).
 * @throws Error when the schema does not compile (a stored schema always does).
 */
export function validateRunInput(workflow: InputSchemaOwner, input: Record<string, unknown>): RunInputCheck {
  if (workflow.inputSchema == null) return { ok: true, input };
  const validate = validatorFor(workflow.id, workflow.version, workflow.inputSchema);
  const copy = structuredClone(input);
  if (validate(copy)) return { ok: true, input: copy };
  return { ok: false, problems: (validate.errors ?? []).map(toProblem) };
}

/** The JSON pointers of the input that `problems` (from {@link validateRunInput}) name, without the message: `/customerEmail`. */
export function problemPaths(problems: readonly string[]): string[] {
  return problems.map((problem) => problem.slice(0, problem.indexOf(': ')));
}

let shared: Ajv2020 | undefined;

/** The one ajv instance, made on first use (a process that never checks an input does not pay for it). */
function ajvInstance(): Ajv2020 {
  if (shared === undefined) {
    // Strict mode refuses unknown keywords and formats (a typo is a 400 at save, not a check silently skipped).
    // No loadSchema: a `$ref` ajv cannot resolve locally is a compile error, never a fetch.
    shared = new Ajv2020({ strict: true, allErrors: true, useDefaults: true, validateSchema: true });
    // ajv-formats is CommonJS: under NodeNext its default import is the module; `.default` is the plugin.
    formats.default(shared);
  }
  return shared;
}

/** A compiled schema, with the schema object last seen for it and the JSON text it was compiled from. */
interface CachedValidator {
  validate: ValidateFunction;
  seen: object;
  text: string;
}

/** Compiled schemas by `id@version`; a Map's order is insertion order: re-inserting on use makes it an LRU. */
const validators = new Map<string, CachedValidator>();

function validatorFor(id: string, version: number, schema: Record<string, unknown>): ValidateFunction {
  const key = `${id}@${version}`;
  let entry = validators.get(key);
  if (entry !== undefined && entry.seen !== schema) {
    // Another object (each store read makes one): the same schema unless the text differs
    // (e.g. a store emptied and refilled in tests; a stored workflow's version changes with its inputSchema).
    if (JSON.stringify(schema) === entry.text) entry.seen = schema;
    else {
      forget(key, entry);
      entry = undefined;
    }
  }
  if (entry === undefined) {
    const text = JSON.stringify(schema);
    // ajv keys its own cache by the schema object: compile a private copy, so that removing it later finds it.
    entry = { validate: ajvInstance().compile(JSON.parse(text) as object), seen: schema, text };
    if (validators.size >= MAX_CACHED_VALIDATORS) {
      const [oldestKey, oldest] = validators.entries().next().value as [string, CachedValidator];
      forget(oldestKey, oldest);
    }
  } else {
    validators.delete(key);
  }
  validators.set(key, entry);
  return entry.validate;
}

function forget(key: string, entry: CachedValidator): void {
  validators.delete(key);
  ajvInstance().removeSchema(entry.validate.schema as object);
}

/** `$id` anywhere, or a `$ref` / `$dynamicRef` not starting with `#`: refused, so that every reference is local. */
function referenceProblems(schema: object, at: string): string[] {
  const problems: string[] = [];
  const stack: Array<[unknown, string]> = [[schema, at]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === '$id' && typeof child === 'string') problems.push(`${childPath}: is not allowed (input schemas are self-contained)`);
      else if ((key === '$ref' || key === '$dynamicRef') && typeof child === 'string' && !child.startsWith('#')) {
        problems.push(`${childPath}: only local references (#...) are allowed`);
      } else stack.push([child, childPath]);
    }
  }
  return problems;
}

/** One ajv error as `/path: message`: a missing property is named by its own path. */
function toProblem(error: ErrorObject): string {
  if (error.keyword === 'required') return `${error.instancePath}/${escapePointer(String(error.params['missingProperty']))}: is required`;
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${escapePointer(String(error.params['additionalProperty']))}: is not an allowed property`;
  const path = error.instancePath === '' ? '(input)' : error.instancePath;
  if (error.keyword === 'enum') return `${path}: must be one of ${(error.params['allowedValues'] as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
  return `${path}: ${error.message ?? `fails "${error.keyword}"`}`;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
