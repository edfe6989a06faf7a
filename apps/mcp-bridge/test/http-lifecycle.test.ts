/**
 * The HTTP mode's request lifecycle when the client goes away while the bridge awaits the API (the
 * bearer credential probe): the body read settles at once instead of waiting for 'close'/'end'
 * events that have already fired, and the bridge goes on serving. A fake API whose probe read the
 * test releases, so the order of events is the test's.
 */
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfig, startHttp, type ApiClient } from '@switchyard/mcp-bridge';
import { CLOSED, readJson } from '../src/http.ts';

describe('readJson', () => {
  it('answers CLOSED at once for a request already destroyed or ended, without waiting for events', async () => {
    const destroyed = new PassThrough();
    destroyed.destroy();
    await once(destroyed, 'close');
    expect(await settledWithin(readJson(destroyed as unknown as IncomingMessage))).toBe(CLOSED);
    expect(destroyed.listenerCount('data') + destroyed.listenerCount('end') + destroyed.listenerCount('close')).toBe(0);

    const ended = new PassThrough();
    ended.end('{}');
    ended.resume();
    await once(ended, 'end');
    expect(await settledWithin(readJson(ended as unknown as IncomingMessage))).toBe(CLOSED);
  });

  it('reads a live body as JSON (undefined when not JSON) and removes its listeners', async () => {
    const live = new PassThrough();
    const read = readJson(live as unknown as IncomingMessage);
    live.end('{"jsonrpc":"2.0"}');
    expect(await read).toEqual({ jsonrpc: '2.0' });
    expect(live.listenerCount('data') + live.listenerCount('end') + live.listenerCount('close')).toBe(0);
    const garbage = new PassThrough();
    const bad = readJson(garbage as unknown as IncomingMessage);
    garbage.end('{');
    expect(await bad).toBeUndefined();
  });
});

describe('a client that goes away during the credential probe', () => {
  it('is let go once the probe answers, and the bridge serves the next request', async () => {
    const probes: Array<() => void> = [];
    const api: ApiClient = {
      // Every probe waits until the test releases it; then it succeeds (the token is accepted).
      get: <T>() => new Promise<T>((resolve) => probes.push(() => resolve({ items: [] } as T))),
      post: () => Promise.reject(new Error('unused')),
      put: () => Promise.reject(new Error('unused')),
      delete: () => Promise.reject(new Error('unused')),
      url: (path) => `http://api.test${path}`,
      close: async () => {},
    };
    let logs = '';
    const logger = pino({ level: 'debug' }, { write: (line: string) => void (logs += line) });
    const config = parseConfig(['--http', '0'], {})!;
    const bridge = await startHttp({ apis: { forToken: () => api }, apiToken: null, tools: [], logger }, config.http!);
    try {
      const { port } = new URL(bridge.url);
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer some-token\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
      await until(() => probes.length === 1);
      socket.destroy();
      await once(socket, 'close');
      // Long enough for the bridge to see the connection end before the probe answers.
      await new Promise((resolve) => setTimeout(resolve, 100));
      probes.shift()!();
      await until(() => logs.includes('closed by the client before its body was read'));

      // The bridge still serves: the next request gets its answer once its probe is released.
      const answer = fetch(bridge.url, {
        method: 'POST',
        headers: { authorization: 'Bearer some-token', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      await until(() => probes.length === 1);
      probes.shift()!();
      const response = await answer;
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    } finally {
      await bridge.close();
    }
  });
});

/** Waits until `condition` holds (polls every 5 ms; fails after 5 s). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `promise`'s value, or the string 'pending' when it has not settled within 1 s. */
function settledWithin<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 1_000).unref())]);
}
