/**
 * The YAML parser threads (plugins/yaml-parse-pool.ts): the shared parser's results and messages
 * through a thread, the bounded queue (503 `too_busy`), the time bound (413, the thread replaced),
 * and closing (nothing left running, later bodies refused).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidRequestError, TooBusyError } from '@switchyard/domain';
import { YamlDefinitionError, parseYamlDefinition } from '@switchyard/domain/yaml-definition';
import { YamlBodyTooLargeError, YamlParsePool, type YamlParsePoolOptions } from '../src/plugins/yaml-parse-pool.ts';

const LIMIT = 1024 * 1024;
/** A flow sequence of `kib` KiB: the slowest shape per byte for the parser (bench:yaml: seconds per MiB). */
const slow = (kib: number) => `[${'1, '.repeat(ITEMS(kib) - 1)}1]`;
/** Numbers in {@link slow}'s sequence. */
const ITEMS = (kib: number) => Math.floor((kib * 1024) / 3);

const pools: YamlParsePool[] = [];
function pool(options: YamlParsePoolOptions): YamlParsePool {
  const created = new YamlParsePool(options);
  pools.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** What `promise` rejects with, or a failure when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: Error) => error,
  );
}

describe('YamlParsePool', () => {
  it('gives the shared parser\'s value and messages, through a thread and on the event loop alike', async () => {
    const text = 'name: x\nnodes:\n  - &a {name: A, nodeType: step}\n  - *a\n';
    const bad = 'a: 1\na: 2\n';
    const expected = "YAML line 2, column 1: the key 'a' appears twice in one mapping";
    expect(() => parseYamlDefinition(bad)).toThrow(new YamlDefinitionError('invalid', expected));
    for (const threads of [1, 0]) {
      const p = pool({ threads });
      expect(await p.parse(text, LIMIT)).toStrictEqual(parseYamlDefinition(text));
      const refused = await rejection(p.parse(bad, LIMIT));
      expect(refused).toBeInstanceOf(InvalidRequestError);
      expect(refused.message).toBe(expected);
      const expanded = await rejection(p.parse(`a: &a "${'x'.repeat(800)}"\nb: [*a, *a]\n`, 1_000));
      expect(expanded).toBeInstanceOf(YamlBodyTooLargeError);
      expect(expanded).toMatchObject({ statusCode: 413, message: expect.stringMatching(/larger than 2000 bytes as JSON/) });
    }
  });

  it('refuses a body at once with 503 too_busy when every thread is busy and the queue full; the others are parsed', async () => {
    const p = pool({ threads: 1, queue: 1, timeoutMs: 60_000 });
    const first = p.parse(slow(256), LIMIT);
    const second = p.parse(slow(16), LIMIT);
    const third = await rejection(p.parse('a: 1\n', LIMIT));
    expect(third).toBeInstanceOf(TooBusyError);
    expect(third).toMatchObject({ code: 'too_busy', status: 503, retryAfterSeconds: 1 });
    expect(third.message).toMatch(/1 YAML bodies are being parsed and 1 are waiting/);
    expect(((await first) as number[]).length).toBe(ITEMS(256));
    expect(((await second) as number[]).length).toBe(ITEMS(16));
    // The slots are free again.
    expect(await p.parse('a: 1\n', LIMIT)).toEqual({ a: 1 });
  });

  it('ends a parse that runs out of time (413) and answers the next body on a new thread; a body waiting that long gets too_busy', async () => {
    const p = pool({ threads: 1, queue: 1, timeoutMs: 1_500 });
    // Several seconds of parsing (4 MiB of the slowest shape; the pool does not limit the text's size itself).
    const running = rejection(p.parse(slow(4096), 8 * LIMIT));
    const waiting = rejection(p.parse('a: 1\n', LIMIT));
    const waited = await waiting;
    expect(waited).toBeInstanceOf(TooBusyError);
    expect(waited.message).toMatch(/no YAML parser thread was free within 1500 ms/);
    const timedOut = await running;
    expect(timedOut).toBeInstanceOf(YamlBodyTooLargeError);
    expect(timedOut.message).toBe('The YAML body took longer than 1500 ms to parse; send a smaller or simpler document (or JSON)');
    expect(await p.parse('b: 2\n', LIMIT)).toEqual({ b: 2 });
  });

  it('close ends the parse in flight (too_busy), refuses the bodies waiting and every later one', async () => {
    const p = pool({ threads: 1, queue: 2, timeoutMs: 60_000 });
    const running = rejection(p.parse(slow(4096), 8 * LIMIT));
    const waiting = rejection(p.parse('a: 1\n', LIMIT));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await p.close();
    for (const refused of [await running, await waiting, await rejection(p.parse('a: 1\n', LIMIT))]) {
      expect(refused).toBeInstanceOf(TooBusyError);
      expect(refused.message).toMatch(/shutting down/);
    }
  });
});
