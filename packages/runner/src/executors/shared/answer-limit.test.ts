/**
 * The counted reader of answers (`answer-limit.ts`): where reading stops (exactly past the limit),
 * that the connection is closed when it stops, and the counted fetch bodies the SDK clients read
 * (a JSON answer counted whole, an event-stream per event).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerTooLargeError, AnswerWatch, MIN_ANSWER_MARGIN_BYTES, answerReadLimit, boundedFetch, countingStream, readBounded } from './answer-limit.ts';

/** A server answering what the test puts in `answer`, noting whether each response's client went away before the end. */
let server: Server;
let base: string;
let answer: (response: ServerResponse) => void = (response) => response.end();
const closedEarly: Array<Promise<boolean>> = [];
const agent = new Agent();

beforeAll(async () => {
  server = createServer((req, response) => {
    req.resume();
    closedEarly.push(new Promise((resolve) => response.on('close', () => resolve(!response.writableFinished))));
    answer(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Answers `total` bytes of 'x' in chunks of `chunk`, then ends; or streams forever when `total` is Infinity (back-pressure respected). */
function stream(total: number, chunk = 16 * 1024, contentType = 'application/json'): (response: ServerResponse) => void {
  return (response) => {
    response.writeHead(200, { 'content-type': contentType });
    let sent = 0;
    const pump = (): void => {
      while (!response.destroyed) {
        const size = Math.min(chunk, total - sent);
        if (size <= 0) return void response.end();
        sent += size;
        if (!response.write(Buffer.alloc(size, 'x'))) return void response.once('drain', pump);
      }
    };
    pump();
  };
}

async function* chunks(...sizes: number[]): AsyncGenerator<Uint8Array> {
  for (const size of sizes) yield new Uint8Array(size).fill(65);
}

describe('answerReadLimit', () => {
  it('is the output limit plus a quarter, at least 64 KiB more', () => {
    expect(answerReadLimit(1024 * 1024)).toBe(1024 * 1024 + 256 * 1024);
    expect(answerReadLimit(1024)).toBe(1024 + MIN_ANSWER_MARGIN_BYTES);
    // An answer that carries its output twice (MCP structured content) gets twice the room.
    expect(answerReadLimit(1024 * 1024, 2)).toBe(2 * 1024 * 1024 + 512 * 1024);
  });
});

describe('readBounded', () => {
  it('reads a body of exactly the limit to its end, and stops one byte past it', async () => {
    await expect(readBounded(chunks(600, 400), 1000)).resolves.toMatchObject({ complete: true, bytesRead: 1000 });
    const over = await readBounded(chunks(600, 401, 5000), 1000);
    expect(over).toMatchObject({ complete: false, bytesRead: 1001 });
    expect(over.bytes).toHaveLength(1000);
  });

  it('stops reading an endless answer at the limit and closes its socket', async () => {
    answer = stream(Infinity);
    const response = await request(`${base}/endless`, { dispatcher: agent });
    const read = await readBounded(response.body, 100_000);
    expect(read.complete).toBe(false);
    expect(read.bytesRead).toBeGreaterThan(100_000);
    expect(read.bytesRead).toBeLessThanOrEqual(100_000 + 64 * 1024);
    // The server sees its client go away before the end: nothing more is read.
    expect(await closedEarly.at(-1)).toBe(true);
  });
});

describe('countingStream', () => {
  async function pass(stream: TransformStream<Uint8Array, Uint8Array>, ...parts: string[]): Promise<string> {
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
    return new Response(source.pipeThrough(stream)).text();
  }
  const exceeded = (bytes: number) => new Error(`over at ${bytes}`);

  it('counts everything without perEvent: exactly the limit passes, one byte more errors', async () => {
    await expect(pass(countingStream(10, false, exceeded), '12345', '67890')).resolves.toBe('1234567890');
    await expect(pass(countingStream(10, false, exceeded), '12345', '678901')).rejects.toThrow('over at 11');
  });

  it('counts each event of an event-stream on its own, blank lines split across chunks included', async () => {
    const event = 'data: 123456\n\n'; // 14 bytes
    await expect(pass(countingStream(14, true, exceeded), event.repeat(50))).resolves.toHaveLength(700);
    // 14 bytes, then 16 (CRLF line ends), the blank lines cut across chunks.
    await expect(pass(countingStream(16, true, exceeded), 'data: 123456\n', '\ndata: 123456\r\n\r', '\n', event)).resolves.toHaveLength(44);
    await expect(pass(countingStream(14, true, exceeded), event, 'data: 1234567\n\n')).rejects.toThrow('over at 29');
    // An event that never ends is counted as it comes.
    await expect(pass(countingStream(14, true, exceeded), event, 'data: 12', '3456789')).rejects.toThrow('over at 29');
  });
});

describe('boundedFetch', () => {
  const fetchBounded = (watch?: AnswerWatch) => boundedFetch(fetch, { maxOutputBytes: 1024, what: 'test answer', guard: () => watch });

  it('passes an answer within the read limit through, status and headers kept', async () => {
    answer = (response) => response.writeHead(201, { 'content-type': 'application/json', 'x-kept': 'yes' }).end('{"ok":true}');
    const response = await fetchBounded()(`${base}/small`);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-kept')).toBe('yes');
    await expect(response.json()).resolves.toEqual({ ok: true });
  });

  it('errors the body of a larger answer, tells the guard, and closes the connection', async () => {
    const limit = answerReadLimit(1024);
    answer = stream(Infinity);
    const watch = new AnswerWatch();
    const response = await fetchBounded(watch)(`${base}/large`);
    const error = await response.json().then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(AnswerTooLargeError);
    expect((error as AnswerTooLargeError).message).toMatch(/^test answer exceeds SWITCHYARD_MAX_OUTPUT_BYTES \(1024 bytes\): read stopped at \d+ bytes$/);
    expect((error as AnswerTooLargeError).bytesRead).toBeGreaterThan(limit);
    expect((error as AnswerTooLargeError).retryable).toBe(false);
    expect(watch.error).toBe(error);
    expect(watch.signal.aborted).toBe(true);
    expect(await closedEarly.at(-1)).toBe(true);
  });

  it('reads an event-stream longer than the limit made of small events', async () => {
    const limit = answerReadLimit(1024);
    const event = `data: ${'y'.repeat(1000)}\n\n`;
    answer = (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(event.repeat(Math.ceil((limit * 3) / event.length)));
    };
    const response = await fetchBounded()(`${base}/events`);
    expect((await response.text()).length).toBeGreaterThan(limit * 3);
  });
});
