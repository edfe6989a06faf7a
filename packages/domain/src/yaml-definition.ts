/**
 * YAML text → the plain JSON value its JSON twin would parse to: the one parser of workflow
 * definitions written as YAML, used by the API (YAML request bodies, parsed in a worker thread:
 * apps/api/src/plugins/yaml-parse-worker.ts) and by the MCP bridge (`yaml` arguments). Imported as
 * `@switchyard/domain/yaml-definition` (not from the package index, so that code not parsing YAML
 * does not load the `yaml` package). Messages name the line and column (`YAML line 3, column 5:
 * ...`) and never quote the text.
 *
 * - One document; the YAML 1.2 core schema only (no `!!binary`, `!!timestamp`, `!!set`,
 *   `!!js/...` or custom tags: a date-looking scalar stays a string); `.inf` and `.nan` are
 *   refused (JSON has no such numbers); keys are strings (`1:` is the key "1", a collection as key
 *   is refused); duplicate keys are refused; `<<` is an ordinary key (no merge keys).
 * - Anchors and aliases are allowed, with at most {@link MAX_YAML_ALIASES} alias expansions, and
 *   the expanded value is measured as JSON: larger than {@link YAML_EXPANSION_FACTOR} times the
 *   byte limit is refused (`too_large`). The result shares no objects (an alias is a copy).
 * - Nesting is checked on the parser's stack while the text is read, before the document is built
 *   (the builder recurses): deeper than {@link MAX_BODY_DEPTH} levels is refused.
 * - A leading byte order mark is skipped; `__proto__` becomes an ordinary own key (the API's body
 *   guard then refuses it, as for JSON).
 */
import { Composer, Lexer, LineCounter, Parser, isScalar, visit, type Document, type DocumentOptions, type ErrorCode, type ParseOptions, type Scalar, type SchemaOptions, type ToJSOptions } from 'yaml';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from './body-limits.ts';

/** Most alias expansions in one document (`maxAliasCount`): enough for sharing a few blocks, not for a "billion laughs". */
export const MAX_YAML_ALIASES = 100;

/** How many times the byte limit a YAML document's value may take as JSON text once aliases are expanded. */
export const YAML_EXPANSION_FACTOR = 2;

/** Most bytes (UTF-8) of YAML text: the API's body limit. */
export const MAX_YAML_BYTES = MAX_BODY_BYTES;

/**
 * Deepest parser stack allowed before the document is built: the stack holds the document and
 * one entry per open collection (a value nested n levels deep needs n + 2), so this lets through
 * everything the API's body guard then measures exactly, and nothing deep enough to overflow the builder.
 */
const MAX_PARSER_STACK = MAX_BODY_DEPTH + 8;

/** How the `yaml` package reads definitions: see the module comment. */
const PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.2',
  schema: 'core',
  merge: false,
  resolveKnownTags: false,
  stringKeys: true,
  // The package's own check compares each key with every earlier one (a flat map of 50,000 keys
  // takes minutes); refuseNonJson checks with a set instead.
  uniqueKeys: false,
  strict: true,
  // Warnings are refused below, not printed; 'silent' would also drop the multiple-document error.
  logLevel: 'error',
};

/**
 * Why YAML text was refused: `invalid` (malformed, or beyond what JSON holds; the API answers
 * 400) or `too_large` (its aliases expand beyond the limit; the API answers 413).
 */
export type YamlProblemKind = 'invalid' | 'too_large';

/** YAML text refused by {@link parseYamlDefinition}; `message` is the one every edge answers. */
export class YamlDefinitionError extends Error {
  readonly kind: YamlProblemKind;
  constructor(kind: YamlProblemKind, message: string) {
    super(message);
    this.name = 'YamlDefinitionError';
    this.kind = kind;
  }
}

/** A problem at `offset` (UTF-16 index into the text), as an `invalid` error naming line and column. */
function problemAt(lines: LineCounter, offset: number, message: string): YamlDefinitionError {
  const { line, col } = lines.linePos(offset);
  return new YamlDefinitionError('invalid', `YAML line ${line}, column ${col}: ${message}`);
}

/**
 * The CST tokens of `text` (what `Parser.parse` yields), refusing nesting deeper than
 * {@link MAX_PARSER_STACK} as soon as the parser's stack reaches it.
 */
function* boundedTokens(text: string, lines: LineCounter): Generator<ReturnType<Parser['next']> extends Generator<infer T> ? T : never> {
  const parser = new Parser(lines.addNewLine);
  lines.addNewLine(0);
  for (const lexeme of new Lexer().lex(text, false)) {
    yield* parser.next(lexeme);
    if (parser.stack.length > MAX_PARSER_STACK) throw problemAt(lines, parser.offset, `the document nests deeper than ${MAX_BODY_DEPTH} levels`);
  }
  yield* parser.end();
}

/** The one document of `text`, or an error for a second one. */
function singleDocument(text: string, lines: LineCounter): Document.Parsed {
  const composer = new Composer(PARSE_OPTIONS);
  let first: Document.Parsed | undefined;
  for (const doc of composer.compose(boundedTokens(text, lines), true, text.length)) {
    if (first) throw problemAt(lines, doc.range[0], 'the body holds more than one YAML document; send one');
    first = doc;
  }
  return first!;
}

/** Clearer words for the `yaml` package's messages that name its options or say too little. */
const MESSAGES: Partial<Record<ErrorCode, (message: string) => string>> = {
  NON_STRING_KEY: () => 'a mapping key must be a scalar, not a collection',
  TAG_RESOLVE_FAILED: (message) => `${message} (only the tags of the YAML 1.2 core schema are accepted)`,
};

/**
 * Throws for the first problem in `doc`: a parse error or warning, a duplicate key, a number JSON
 * cannot hold, an alias without anchor (see the module comment).
 */
function refuseNonJson(doc: Document.Parsed, lines: LineCounter): void {
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const clearer = MESSAGES[problem.code];
    throw problemAt(lines, problem.pos[0], clearer ? clearer(problem.message) : problem.message);
  }
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
      if (typeof node.value === 'number' && !Number.isFinite(node.value)) {
        throw problemAt(lines, node.range?.[0] ?? 0, `'${String(node.source)}' is not a number JSON can hold`);
      }
    },
    Alias(_key, node) {
      if (node.resolve(doc) === undefined) throw problemAt(lines, node.range?.[0] ?? 0, `the alias *${node.source} has no anchor &${node.source} before it`);
    },
  });
}

/** The first alias of `doc`, where an alias-count error is reported. */
function firstAliasOffset(doc: Document.Parsed): number {
  let offset = 0;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

/**
 * Bytes of `value` as JSON text, counted only up to `limit`: returns a number above `limit` as
 * soon as it is exceeded, so a value that aliases expand to gigabytes costs at most `limit` steps.
 * Values are what the core schema builds: plain objects, arrays, strings, finite numbers,
 * booleans and null.
 */
function jsonBytesUpTo(value: unknown, limit: number): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && bytes <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') bytes += Buffer.byteLength(item) + 2;
    else if (item === null || typeof item !== 'object') bytes += String(item).length;
    else if (Array.isArray(item)) {
      bytes += 2 + Math.max(item.length - 1, 0);
      for (const element of item) stack.push(element);
    } else {
      const entries = Object.entries(item);
      bytes += 2 + Math.max(entries.length - 1, 0);
      for (const [key, element] of entries) {
        bytes += Buffer.byteLength(key) + 3;
        stack.push(element);
      }
    }
  }
  return bytes;
}

const BYTE_ORDER_MARK = '\uFEFF';

/**
 * The JSON text of the value YAML `text` holds: exactly what `JSON.stringify` of its JSON twin's
 * value gives (so `JSON.parse` of it is plain data sharing no object). `limitBytes` is the byte
 * limit of the text (the API's route body limit; default {@link MAX_YAML_BYTES}); the value as JSON
 * may take {@link YAML_EXPANSION_FACTOR} times that. A leading byte order mark is skipped.
 * Returning text rather than the value lets a worker thread hand it over as one string.
 * Throws {@link YamlDefinitionError}: `invalid` with the line and column of the problem (or for
 * text holding no document), `too_large` when the aliases expand beyond the limit.
 */
export function yamlDefinitionToJson(text: string, limitBytes: number = MAX_YAML_BYTES): string {
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
  if (text.trim() === '') throw new YamlDefinitionError('invalid', 'The request body holds no YAML document');
  const lines = new LineCounter();
  const doc = singleDocument(text, lines);
  refuseNonJson(doc, lines);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES } satisfies ToJSOptions);
  } catch (error) {
    // The only error toJS throws once the checks above passed: too many alias expansions.
    throw problemAt(lines, firstAliasOffset(doc), `more than ${MAX_YAML_ALIASES} alias expansions (${(error as Error).message})`);
  }
  const expandedLimit = YAML_EXPANSION_FACTOR * limitBytes;
  if (jsonBytesUpTo(value, expandedLimit) > expandedLimit) {
    throw new YamlDefinitionError(
      'too_large',
      `The request body, with its YAML aliases expanded, is larger than ${expandedLimit} bytes as JSON (${YAML_EXPANSION_FACTOR} times the body limit)`,
    );
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The value YAML `text` holds, as plain JSON data (what `JSON.parse` of its JSON twin gives); see
 * {@link yamlDefinitionToJson} for `limitBytes` and the {@link YamlDefinitionError} it throws.
 */
export function parseYamlDefinition(text: string, limitBytes: number = MAX_YAML_BYTES): unknown {
  return JSON.parse(yamlDefinitionToJson(text, limitBytes));
}
