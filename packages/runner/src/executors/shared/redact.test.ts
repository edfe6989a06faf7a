import { describe, expect, it } from 'vitest';
import { MIN_SECRET_LENGTH, REDACTED, Redactor, redactingLogger } from './redact.ts';
import { ExecutorError } from '../types.ts';
import { captureLogs } from '../../testing/log-capture.ts';

const SECRET = 'tok-3f9a"c/d e';

/** A spawn failure as Node reports it: the full command line in `spawnargs`. */
function spawnError(): Error {
  return Object.assign(new Error('spawn /opt/mcp ENOENT'), {
    code: 'ENOENT',
    errno: -2,
    syscall: 'spawn /opt/mcp',
    path: '/opt/mcp',
    spawnargs: [`--token=${SECRET}`],
  });
}

describe('Redactor.text', () => {
  const redactor = new Redactor([SECRET, 'abcd', 'abcdef']);

  it('replaces every occurrence, also JSON-escaped and URL-encoded', () => {
    expect(redactor.text(`a ${SECRET} b ${SECRET}`)).toBe(`a ${REDACTED} b ${REDACTED}`);
    expect(redactor.text(JSON.stringify({ token: SECRET }))).toBe(`{"token":"${REDACTED}"}`);
    expect(redactor.text(`https://h/?t=${encodeURIComponent(SECRET)}`)).toBe(`https://h/?t=${REDACTED}`);
  });

  it('replaces the base64 form of a secret, standard or URL-safe, padded or not', () => {
    const base64 = Buffer.from(SECRET).toString('base64');
    const base64url = Buffer.from(SECRET).toString('base64url');
    expect(base64).not.toBe(base64url);
    expect(redactor.text(`Basic ${base64}`)).toMatch(new RegExp(`^Basic \\[REDACTED\\]=*$`));
    expect(redactor.text(`t=${base64url}.`)).toBe(`t=${REDACTED}.`);
  });

  it('replaces a secret that contains another one whole', () => {
    expect(redactor.text('xabcdefx abcdx')).toBe(`x${REDACTED}x ${REDACTED}x`);
  });

  it('treats secrets as text, not patterns', () => {
    expect(new Redactor(['a.b*c']).text('a.b*c axbbc')).toBe(`${REDACTED} axbbc`);
  });

  it(`skips secrets shorter than ${MIN_SECRET_LENGTH} characters, and has nothing to do without secrets`, () => {
    expect(new Redactor(['', '1', 'on', 'abc']).text('1 on abc')).toBe('1 on abc');
    expect(Redactor.none.text(SECRET)).toBe(SECRET);
  });
});

describe('Redactor.value', () => {
  const redactor = new Redactor([SECRET]);

  it('copies arrays and plain objects deeply, redacting strings and keys, and leaves the input alone', () => {
    const date = new Date(0);
    const input = { list: [SECRET, 1, null, { [SECRET]: `x${SECRET}` }], when: date, ok: true };
    expect(redactor.value(input)).toEqual({ list: [REDACTED, 1, null, { [REDACTED]: `x${REDACTED}` }], when: date, ok: true });
    expect(input.list[0]).toBe(SECRET);
  });

  it('cuts cycles', () => {
    const input: Record<string, unknown> = { name: SECRET };
    input['self'] = input;
    expect(redactor.value(input)).toEqual({ name: REDACTED, self: '[Circular]' });
  });
});

describe('Redactor.error', () => {
  const redactor = new Redactor([SECRET]);

  it('keeps name, code, message and stack (redacted) and drops every other property', () => {
    const original = spawnError();
    original.stack = `Error: ${SECRET}\n    at somewhere`;
    const copy = redactor.error(new TypeError('bad', { cause: original }));
    expect(copy).toMatchObject({ name: 'TypeError', message: 'bad' });
    const cause = copy.cause as Error & Record<string, unknown>;
    expect(cause).toBeInstanceOf(Error);
    expect(cause.message).toBe('spawn /opt/mcp ENOENT');
    expect(cause['code']).toBe('ENOENT');
    expect(cause.stack).toBe(`Error: ${REDACTED}\n    at somewhere`);
    expect(Object.keys(cause)).toEqual(['code']);
  });

  it('keeps an ExecutorError an ExecutorError, with retryable and redacted details', () => {
    const original = new ExecutorError(`tool said ${SECRET}`, { retryable: false, details: { content: [{ type: 'text', text: SECRET }] } });
    const copy = redactor.error(original);
    expect(copy).toBeInstanceOf(ExecutorError);
    expect(copy).toMatchObject({ message: `tool said ${REDACTED}`, retryable: false, details: { content: [{ type: 'text', text: REDACTED }] } });
  });

  it('turns thrown non-errors into Errors', () => {
    expect(redactor.error(`boom ${SECRET}`)).toMatchObject({ message: `boom ${REDACTED}` });
  });

  it('executorError: an ExecutorError always, retryable unless the original says otherwise', () => {
    const wrapped = redactor.executorError(new Error(`lost ${SECRET}`));
    expect(wrapped).toBeInstanceOf(ExecutorError);
    expect(wrapped).toMatchObject({ message: `lost ${REDACTED}`, retryable: true });
    expect(redactor.executorError(new ExecutorError('cancelled', { retryable: false }))).toMatchObject({ message: 'cancelled', retryable: false });
  });
});

describe('redactingLogger', () => {
  it('writes pino records without the secrets or the command line of errors', () => {
    const captured = captureLogs();
    const logger = redactingLogger(captured.logger, new Redactor([SECRET]));
    logger.error({ server: 'leaky', err: new Error('connect failed', { cause: spawnError() }) }, 'MCP server connection failed');
    logger.debug({ server: 'leaky', line: `token is ${SECRET}` }, `stderr ${SECRET}`);
    expect(captured.text()).not.toContain('tok-3f9a');
    expect(captured.text()).not.toContain('spawnargs');
    const [failure, line] = captured.text().trim().split('\n').map((text) => JSON.parse(text) as Record<string, any>);
    // pino joins the cause chain into the message.
    expect(failure).toMatchObject({ server: 'leaky', err: { message: 'connect failed: spawn /opt/mcp ENOENT' } });
    expect(line).toMatchObject({ line: `token is ${REDACTED}`, msg: `stderr ${REDACTED}` });
  });
});
