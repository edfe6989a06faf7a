/**
 * Redaction of one MCP server's (or one `http` executor's) secrets from what leaves the executor
 * layer: error messages (which become node-run errors, run error summaries and run events), tool
 * and webhook output, and log records.
 *
 * Secrets are collected when a registry entry is resolved (see `McpServerTarget.secrets` and
 * `ResolvedHttpEntry.secrets`): every value substituted for a `${VAR}` or `${env:NAME}` reference,
 * the values of `headers`, and the credentials of a URL. Each occurrence of a secret, also
 * JSON-escaped, URL-encoded or base64-encoded (the whole value, standard or URL-safe alphabet),
 * becomes {@link REDACTED}.
 *
 * Secrets shorter than {@link MIN_SECRET_LENGTH} characters are not redacted: a value such as `1`
 * or `on` would otherwise blank out every digit or word containing it and make messages unreadable,
 * and so short a value protects nothing anyway.
 */
import { errorMessage } from './error-message.ts';
import type { ExecutorLogger } from './logger.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall } from '../types.ts';

/** What a secret is replaced with. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted (see the module comment). */
export const MIN_SECRET_LENGTH = 4;

/** How many `cause` links of an error are kept; deeper ones are dropped. */
const MAX_CAUSE_DEPTH = 5;

/** Replaces the secrets of one server in text, values and errors. Immutable; inputs are never modified. */
export class Redactor {
  /** A redactor without secrets: text passes unchanged; errors still lose their extra properties. */
  static readonly none = new Redactor([]);

  /** Matches any secret (longest first, so a secret containing another is replaced whole); null when none. */
  readonly #pattern: RegExp | null;

  /** `secrets`: the values to hide; duplicates, and values shorter than {@link MIN_SECRET_LENGTH}, are ignored. */
  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < MIN_SECRET_LENGTH) continue;
      forms.add(secret);
      forms.add(JSON.stringify(secret).slice(1, -1));
      forms.add(encodeURIComponent(secret));
      // Base64 (standard and URL-safe, without padding, so padded text loses the same prefix): a
      // server or webhook that echoes e.g. a Basic credential or an encoded token.
      const base64 = Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, '');
      forms.add(base64);
      forms.add(base64.replaceAll('+', '-').replaceAll('/', '_'));
    }
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#pattern = alternatives.length === 0 ? null : new RegExp(alternatives.join('|'), 'g');
  }

  /** `text` with every occurrence of a secret replaced by {@link REDACTED}. */
  text(text: string): string {
    return this.#pattern === null ? text : text.replace(this.#pattern, REDACTED);
  }

  /**
   * A copy of `value` with every string (object keys included) redacted, arrays and plain objects
   * copied deeply and Errors replaced by {@link Redactor.error} (also without secrets, so that their
   * extra properties are dropped). Other objects (Date, Buffer, ...) are kept as they are; a cycle
   * becomes `'[Circular]'`.
   */
  value(value: unknown): unknown {
    return this.#copy(value, new Set());
  }

  /**
   * A stand-in for `error` that carries only what is safe to store or log: its name, its `code`
   * when a string or number, and its message, stack and cause chain redacted. Every other property
   * is dropped — e.g. a spawn error's `spawnargs` and `path`, which hold the expanded command line.
   * An ExecutorError stays an ExecutorError (with `retryable` and redacted `details`); anything else
   * becomes a plain Error. An ExecutorError keeps its `retryAfterMs`.
   */
  error(error: unknown): Error {
    return this.#error(error, 0);
  }

  /** {@link Redactor.error} for the errors an executor rejects with: always an ExecutorError (retryable unless it says otherwise). */
  executorError(error: unknown): ExecutorError {
    const redacted = this.error(error);
    return redacted instanceof ExecutorError ? redacted : new ExecutorError(redacted.message, { cause: redacted });
  }

  #error(error: unknown, depth: number): Error {
    if (!(error instanceof Error)) return new Error(this.text(errorMessage(error)));
    const message = this.text(error.message);
    const cause = error.cause === undefined || depth >= MAX_CAUSE_DEPTH ? undefined : this.#causeOf(error.cause, depth + 1);
    const copy = error instanceof ExecutorError
      ? new ExecutorError(message, { retryable: error.retryable, details: this.value(error.details), cause, retryAfterMs: error.retryAfterMs })
      : new Error(message, cause === undefined ? undefined : { cause });
    if (!(copy instanceof ExecutorError) && error.name !== copy.name) {
      Object.defineProperty(copy, 'name', { value: error.name, configurable: true, writable: true, enumerable: false });
    }
    const code: unknown = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') Object.assign(copy, { code });
    copy.stack = error.stack === undefined ? undefined : this.text(error.stack);
    return copy;
  }

  /** A cause: Errors are redacted like {@link Redactor.error}, other values like {@link Redactor.value}. */
  #causeOf(cause: unknown, depth: number): unknown {
    return cause instanceof Error ? this.#error(cause, depth) : this.value(cause);
  }

  #copy(value: unknown, ancestors: Set<object>): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null) return value;
    if (value instanceof Error) return this.error(value);
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) return value;
    if (ancestors.has(value)) return '[Circular]';
    ancestors.add(value);
    try {
      if (isArray) return value.map((item: unknown) => this.#copy(item, ancestors));
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.text(key), this.#copy(item, ancestors)]));
    } finally {
      ancestors.delete(value);
    }
  }
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * An executor's `invoke` around `attempt`: the one place its outputs and errors leave for the run's
 * records, so both are redacted here — the output with {@link Redactor.value}, a failure with
 * {@link Redactor.executorError} (always an ExecutorError), logged at debug as `failed` with
 * `fields(call)`, the call's context and attempt.
 */
export function redactedInvoke(
  redactor: Redactor,
  logger: ExecutorLogger,
  failed: string,
  fields: Record<string, unknown>,
  attempt: (call: ExecutorCall) => Promise<unknown>,
): (call: ExecutorCall) => Promise<unknown> {
  return async (call) => {
    let output: unknown;
    try {
      output = await attempt(call);
    } catch (error) {
      const redacted = redactor.executorError(error);
      logger.debug({ ...fields, ...call.context, attempt: call.attempt, err: redacted }, failed);
      throw redacted;
    }
    return redactor.value(output);
  };
}

/**
 * `logger` with `redactor` applied to every record: the message and every string of the logged
 * object are redacted, and Errors are replaced by redacted stand-ins without their extra
 * properties (see {@link Redactor.error}; a spawn error's `spawnargs` holds the command line).
 */
export function redactingLogger(logger: ExecutorLogger, redactor: Redactor): ExecutorLogger {
  const level = (write: (obj: object, msg?: string) => void) => (obj: object, msg?: string): void => {
    write(redactor.value(obj) as object, msg === undefined ? undefined : redactor.text(msg));
  };
  return {
    debug: level(logger.debug.bind(logger)),
    info: level(logger.info.bind(logger)),
    warn: level(logger.warn.bind(logger)),
    error: level(logger.error.bind(logger)),
  };
}
