/**
 * A scripted webhook for tests of `http` executors: a real `node:http` server on 127.0.0.1 that
 * records every request and answers with the responders a test queues (JSON, text, a status with
 * headers, or never). Not exported from the package; tests import it directly.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received. */
export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Resolves when the client went away before the answer was complete (an aborted request). */
  abandoned: Promise<void>;
}

/** Answers one request (or leaves it hanging). */
export type Responder = (request: ReceivedRequest, response: ServerResponse) => void;

/** Answers `status` with `body` as JSON. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Responder => (_request, response) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};

/** Answers `status` with `body` as `contentType` (default text/plain). */
export const text = (status: number, body: string, headers: Record<string, string> = {}, contentType = 'text/plain; charset=utf-8'): Responder => (_request, response) => {
  response.writeHead(status, { 'content-type': contentType, ...headers }).end(body);
};

/** Never answers. */
export const hang: Responder = () => {};

export class WebhookServer {
  readonly requests: ReceivedRequest[] = [];
  readonly #server: Server;
  #responders: Responder[] = [json(200, { ok: true })];
  readonly #waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Starts a server on 127.0.0.1 and a free port; it answers `{ ok: true }` until told otherwise. */
  static async start(): Promise<WebhookServer> {
    const server = createServer();
    const webhook = new WebhookServer(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        let abandon = (): void => {};
        const abandoned = new Promise<void>((resolve) => (abandon = resolve));
        response.on('close', () => {
          if (!response.writableFinished) abandon();
        });
        const received: ReceivedRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), abandoned };
        webhook.requests.push(received);
        const responder = webhook.#responders.length > 1 ? webhook.#responders.shift()! : webhook.#responders[0]!;
        responder(received, response);
        webhook.#notify();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return webhook;
  }

  /** `http://127.0.0.1:<port><path>`. */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  /** Answers the next requests with `responders` in order; the last one answers every later request too. */
  respond(...responders: Responder[]): void {
    this.#responders = responders;
  }

  /** Resolves once `count` requests arrived in all (their responder has run). */
  untilRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Closes the server and every connection still open. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) {
      if (this.requests.length < waiter.count) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}
