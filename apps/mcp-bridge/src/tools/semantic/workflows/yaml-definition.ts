/**
 * The `yaml` argument of create_workflow and validate_workflow (and the orchestrator's
 * create_workflow): a workflow definition as YAML text instead of the structured `definition`.
 *
 * The bridge parses the text itself and sends the API JSON, because saving by name (overwrite,
 * the default canvas) needs the parsed definition. It reads YAML exactly as the API's YAML body
 * parser does (apps/api/src/plugins/yaml-body.ts; the bridge shares no code with the API, only the
 * REST contract): the same `yaml` package and options, the same rules and the same messages
 * (`YAML line 3, column 5: ...`), which test/mcp-bridge-workflows.e2e.test.ts compares with the
 * API's. What the API checks on any body (nesting depth, `__proto__` keys, size) it checks again
 * on the JSON the bridge sends.
 */
import * as z from 'zod/v4';
import { Composer, Lexer, LineCounter, Parser, isScalar, visit, type Document, type ErrorCode, type Scalar } from 'yaml';
import { ToolError, describeIssues } from '../../../envelope.ts';

/** Most bytes of YAML text (the API's body limit). */
export const MAX_YAML_BYTES = 1024 * 1024;
/** Most alias expansions (the API's `maxAliasCount`). */
const MAX_ALIASES = 100;
/** The API's body depth bound, and the parser stack it allows before building the document. */
const MAX_DEPTH = 128;
const MAX_PARSER_STACK = MAX_DEPTH + 8;
/** How many times the byte limit the value may take as JSON once aliases are expanded. */
const EXPANSION_FACTOR = 2;

/** The `yaml` argument. */
export const YamlText = z
  .string()
  .min(1)
  .refine((text) => Buffer.byteLength(text) <= MAX_YAML_BYTES, `at most ${MAX_YAML_BYTES} bytes of UTF-8`)
  .describe(
    'The definition as YAML text (YAML 1.2, one document), instead of `definition`: the same fields. Errors name the line and column. ' +
      'Example: "name: hello\\nnodes:\\n  - {name: A, nodeType: step, executorKey: echo}\\n"',
  );

const OPTIONS = {
  version: '1.2',
  schema: 'core',
  merge: false,
  resolveKnownTags: false,
  stringKeys: true,
  uniqueKeys: false,
  strict: true,
  logLevel: 'error',
} as const;

const MESSAGES: Partial<Record<ErrorCode, (message: string) => string>> = {
  NON_STRING_KEY: () => 'a mapping key must be a scalar, not a collection',
  TAG_RESOLVE_FAILED: (message) => `${message} (only the tags of the YAML 1.2 core schema are accepted)`,
};

/** INVALID_INPUT naming the `yaml` argument, as the API's 400 says it. */
function invalid(message: string): ToolError {
  return new ToolError('INVALID_INPUT', message, { fields: ['yaml'] });
}

function problemAt(lines: LineCounter, offset: number, message: string): ToolError {
  const { line, col } = lines.linePos(offset);
  return invalid(`YAML line ${line}, column ${col}: ${message}`);
}

function singleDocument(text: string, lines: LineCounter): Document.Parsed {
  function* tokens() {
    const parser = new Parser(lines.addNewLine);
    lines.addNewLine(0);
    for (const lexeme of new Lexer().lex(text, false)) {
      yield* parser.next(lexeme);
      if (parser.stack.length > MAX_PARSER_STACK) throw problemAt(lines, parser.offset, `the document nests deeper than ${MAX_DEPTH} levels`);
    }
    yield* parser.end();
  }
  let first: Document.Parsed | undefined;
  for (const doc of new Composer(OPTIONS).compose(tokens(), true, text.length)) {
    if (first) throw problemAt(lines, doc.range[0], 'the body holds more than one YAML document; send one');
    first = doc;
  }
  return first!;
}

function refuseNonJson(doc: Document.Parsed, lines: LineCounter): void {
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problemAt(lines, problem.pos[0], MESSAGES[problem.code]?.(problem.message) ?? problem.message);
  visit(doc, {
    Map(_key, node) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) throw problemAt(lines, (pair.key as Scalar).range?.[0] ?? 0, `the key '${String(key)}' appears twice in one mapping`);
        seen.add(key);
      }
    },
    Scalar(_key, node) {
      if (typeof node.value === 'number' && !Number.isFinite(node.value)) throw problemAt(lines, node.range?.[0] ?? 0, `'${String(node.source)}' is not a number JSON can hold`);
    },
    Alias(_key, node) {
      if (node.resolve(doc) === undefined) throw problemAt(lines, node.range?.[0] ?? 0, `the alias *${node.source} has no anchor &${node.source} before it`);
    },
  });
}

/**
 * The value of YAML `text`, as plain JSON data. Throws ToolError INVALID_INPUT (`details.fields:
 * ['yaml']`) with the message the API would answer for the same text as a body.
 */
export function parseYamlDefinition(text: string): unknown {
  if (text.trim() === '') throw invalid('The request body holds no YAML document');
  const lines = new LineCounter();
  const doc = singleDocument(text.startsWith('\uFEFF') ? text.slice(1) : text, lines);
  refuseNonJson(doc, lines);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    let offset = 0;
    visit(doc, { Alias: (_key, node) => ((offset = node.range?.[0] ?? 0), visit.BREAK) });
    throw problemAt(lines, offset, `more than ${MAX_ALIASES} alias expansions (${(error as Error).message})`);
  }
  // Expanded aliases: JSON.stringify of a value past the limit would itself be the exhaustion.
  const json = JSON.stringify(value, boundedReplacer(EXPANSION_FACTOR * MAX_YAML_BYTES)) ?? 'null';
  return JSON.parse(json);
}

/**
 * A JSON.stringify replacer that throws once the strings it has seen exceed `limit` bytes (the
 * bulk of an expanded value; an alias repeats its anchor's strings).
 */
function boundedReplacer(limit: number): (key: string, value: unknown) => unknown {
  let bytes = 0;
  return (key, value) => {
    bytes += key.length + (typeof value === 'string' ? value.length : 1);
    if (bytes > limit) throw invalid(`The request body, with its YAML aliases expanded, is larger than ${limit} bytes as JSON (${EXPANSION_FACTOR} times the body limit)`);
    return value;
  };
}

/**
 * `definition`, or the definition `yaml` holds checked against `schema` (the tool's definition
 * argument); exactly one of the two must be given. Throws INVALID_INPUT otherwise, or when the
 * YAML is malformed ({@link parseYamlDefinition}) or does not fit `schema` (fields named
 * `yaml.<path>`).
 */
export function definitionOrYaml<S extends z.ZodType>(schema: S, definition: z.infer<S> | undefined, yaml: string | undefined): z.infer<S> {
  if ((definition === undefined) === (yaml === undefined)) {
    throw new ToolError('INVALID_INPUT', 'Give the definition either as `definition` or as `yaml` text, not both or neither', { fields: ['definition', 'yaml'] });
  }
  if (definition !== undefined) return definition;
  const parsed = schema.safeParse(parseYamlDefinition(yaml!));
  if (parsed.success) return parsed.data;
  const { message, fields } = describeIssues(parsed.error.issues.map((issue) => ({ ...issue, path: ['yaml', ...issue.path] })));
  throw new ToolError('INVALID_INPUT', message, { fields });
}
