/**
 * YAML request bodies (`application/yaml`, `application/x-yaml`, `text/yaml`) for the workflow
 * definition routes: create, update and validate (routes/workflows.ts registers the parser in
 * their scope only). A YAML body is turned into exactly the value the equivalent JSON body would
 * parse to, and then goes through the same body guard (body-guard.ts) and schema validation, so
 * its limits and errors are those of JSON. What YAML adds is refused with a 400 naming the line
 * and column (`YAML line 3, column 5: ...`); messages never quote the body.
 *
 * - One document per body; the YAML 1.2 core schema only (no `!!binary`, `!!timestamp`,
 *   `!!set`, `!!js/...` or custom tags: a date-looking scalar stays a string); `.inf` and `.nan`
 *   are refused (JSON has no such numbers); keys are strings (`1:` is the key "1", a collection
 *   as key is refused); duplicate keys are refused; `<<` is an ordinary key (no merge keys).
 * - Anchors and aliases are allowed, with at most {@link MAX_YAML_ALIASES} alias expansions (the
 *   `yaml` package's `maxAliasCount`), and the expanded value is measured as JSON: larger than
 *   twice the body limit (2 MiB; JSON's quotes and commas make a plain YAML document up to about
 *   1.6 times longer) is a 413. The result shares no objects.
 * - Nesting is checked on the parser's stack before the document is built (the builder recurses):
 *   deeper than the body guard's {@link MAX_BODY_DEPTH} levels is a 400 with its message.
 * - Bytes must be UTF-8 (a byte order mark is skipped); a `charset` parameter other than utf-8 is
 *   a 415. `__proto__` becomes an ordinary own key, which the body guard refuses as for JSON.
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Composer, Lexer, LineCounter, Parser, isScalar, visit, type Document, type ErrorCode, type Scalar, type DocumentOptions, type ParseOptions, type SchemaOptions, type ToJSOptions } from 'yaml';
import { InvalidRequestError } from '@switchyard/domain';
import { MAX_BODY_DEPTH } from './body-guard.ts';

/** Media types of YAML request bodies (the first is the one answers carry). */
export const YAML_MEDIA_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'] as const;

/** Most alias expansions in one body (`maxAliasCount`): enough for sharing a few blocks, not for a "billion laughs". */
export const MAX_YAML_ALIASES = 100;

/**
 * Deepest parser stack allowed before the document is built: the stack holds the document and
 * one entry per open collection (a value nested n levels deep needs n + 2), so this lets through
 * everything the body guard then measures exactly, and nothing deep enough to overflow the builder.
 */
const MAX_PARSER_STACK = MAX_BODY_DEPTH + 8;

/** How the `yaml` package reads bodies: see the module comment. */
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

/** A body whose aliases expand beyond the body limit: 413 `request_too_large`, as the same JSON body would be. */
export class ExpandedBodyTooLargeError extends Error {
  readonly statusCode = 413;
}

/** A YAML body's problem at `offset` (UTF-16 index into the text), as a 400. */
function problemAt(lines: LineCounter, offset: number, message: string): InvalidRequestError {
  const { line, col } = lines.linePos(offset);
  return new InvalidRequestError(`YAML line ${line}, column ${col}: ${message}`);
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

/** The one document of `text`, or a 400 for a second one. Empty text gives an empty document. */
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
 * Throws a 400 for the first problem in `doc`: a parse error or warning, a duplicate key, a
 * number JSON cannot hold, an alias without anchor (see the module comment).
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

/** How many times the body limit a YAML body's value may take as JSON text. */
export const YAML_EXPANSION_FACTOR = 2;

/**
 * Parses a YAML body's text into the value its JSON twin would parse to. `limit` is the body
 * limit in bytes; the value as JSON may take {@link YAML_EXPANSION_FACTOR} times that. Throws
 * InvalidRequestError (400) with the line and column of the problem, or
 * {@link ExpandedBodyTooLargeError} (413).
 */
export function parseYamlText(text: string, limit: number): unknown {
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
  const expandedLimit = YAML_EXPANSION_FACTOR * limit;
  if (jsonBytesUpTo(value, expandedLimit) > expandedLimit) {
    throw new ExpandedBodyTooLargeError(`The request body, with its YAML aliases expanded, is larger than ${expandedLimit} bytes as JSON (${YAML_EXPANSION_FACTOR} times the body limit)`);
  }
  // Through JSON text: plain data sharing no object between two places (an alias is a copy), exactly what JSON.parse gives.
  return JSON.parse(JSON.stringify(value) ?? 'null');
}

const BYTE_ORDER_MARK = '\uFEFF';

/** Parses a YAML request body's bytes; see {@link parseYamlText}. An empty body is a 400, as for JSON. */
export function parseYamlBody(bytes: Buffer, limit: number): unknown {
  if (bytes.length === 0) throw new InvalidRequestError("The request body is empty but Content-Type is YAML");
  if (!isUtf8(bytes)) throw new InvalidRequestError('The request body is not valid UTF-8');
  let text = bytes.toString('utf8');
  if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
  if (text.trim() === '') throw new InvalidRequestError('The request body holds no YAML document');
  return parseYamlText(text, limit);
}

/** A request whose `charset` is not UTF-8: 415, as Fastify answers an unsupported type. */
export class UnsupportedCharsetError extends Error {
  readonly statusCode = 415;
}

/** The `charset` parameter of `request`'s Content-Type, lower-cased, or undefined. */
function charsetOf(request: FastifyRequest): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(request.headers['content-type'] ?? '');
  return match?.[1]?.toLowerCase();
}

/**
 * Installs the YAML parser for {@link YAML_MEDIA_TYPES} in `app`'s scope (call it inside the
 * plugin whose routes take YAML, before registering them).
 */
export function installYamlParser(app: FastifyInstance): void {
  app.addContentTypeParser([...YAML_MEDIA_TYPES], { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const charset = charsetOf(request);
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
        throw new UnsupportedCharsetError(`Unsupported charset '${charset}': YAML bodies must be UTF-8`);
      }
      done(null, parseYamlBody(body as Buffer, request.routeOptions.bodyLimit));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
