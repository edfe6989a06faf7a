/**
 * Where the `a2a` executor's requests may go (security issue, item 6; `target-policy.ts`): no
 * redirect followed (card, message, streaming or not), interface URLs of the card limited to the
 * entry's origin and its `allowedOrigins`, non-public addresses refused unless the entry names one
 * itself (hostnames checked on what they resolve to, with a resolver injected here), and the body
 * of another origin's answer never quoted into the error. The agents are real SDK agents
 * (`test/support/a2a-agents.ts`) and plain node:http servers on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { behaviours, startAgent, type TestAgent } from '../../../../../test/support/a2a-agents.ts';
import { RegistryConfigError } from '../registry-config.ts';
import { createExecutorRegistry } from '../registry.ts';
import { TargetPolicy, TargetRefusedError, addressRange, type Resolver } from '../shared/target-policy.ts';
import { ExecutorError, type ExecutorCall, type ExecutorRegistry } from '../types.ts';

const KEY = 'key-of-the-entry-5d1f';
const TOKEN = 'downstream-token-8c2a';
const PLANTED = 'db_password=hunter2';

/** A plain HTTP server recording every request (method, path, headers, body) and answering with `handler`. */
interface PlainServer {
  origin: string;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

async function plainServer(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<PlainServer> {
  const requests: PlainServer['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ method: request.method!, path: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** What the foreign target answers: 500 with a planted secret in its body. */
const planted = (_request: IncomingMessage, response: ServerResponse): void => {
  response.writeHead(500, { 'content-type': 'text/plain' }).end(`internal error; ${PLANTED}`);
};

function call(): ExecutorCall {
  return {
    arguments: { text: 'the run message' },
    input: null,
    attempt: 1,
    signal: new AbortController().signal,
    downstreamToken: TOKEN,
    context: { runId: 'run-t', nodeId: 'node-t', nodeName: 'Ask' },
  };
}

/** The ExecutorError `promise` rejects with; nothing of the planted body anywhere in it (message, details, causes). */
async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  expect(inspect(error, { depth: 20, showHidden: true })).not.toContain('hunter2');
  return error as ExecutorError;
}

/** Nothing of the call reached `server`: no request, so neither the entry's key, the token nor the message. */
function expectUntouched(server: PlainServer | TestAgent): void {
  expect(server.requests).toEqual([]);
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function agentAt(options: Parameters<typeof startAgent>[0]): Promise<TestAgent> {
  const agent = await startAgent(options);
  cleanup.push(() => agent.close());
  return agent;
}
async function serverWith(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<PlainServer> {
  const server = await plainServer(handler);
  cleanup.push(() => server.close());
  return server;
}
function registryOf(executors: Record<string, unknown>, resolver?: Resolver): ExecutorRegistry {
  const registry = createExecutorRegistry({ executors: executors as never }, { baseDir: '.', env: {}, ...(resolver === undefined ? {} : { resolver }) });
  cleanup.push(() => registry.close());
  return registry;
}

describe('a2a targets: redirects are not followed', () => {
  for (const status of [307, 308]) {
    it(`fails on a ${status} of the card fetch to another origin, which receives nothing`, async () => {
      const other = await serverWith(planted);
      const redirecting = await serverWith((_request, response) => {
        response.writeHead(status, { location: `${other.origin}/agent/.well-known/agent-card.json` }).end(PLANTED);
      });
      const registry = registryOf({ agent: { kind: 'a2a', url: `${redirecting.origin}/agent`, headers: { 'X-Api-Key': KEY } } });
      const error = await rejection(registry.get('agent').invoke(call()));
      expect(error).toMatchObject({
        retryable: false,
        message: `A2A agent ${redirecting.origin}/agent: cannot fetch its agent card: answered HTTP ${status}, a redirect; redirects are not followed (configure the final URL instead)`,
      });
      expect(redirecting.requests).toHaveLength(1);
      expectUntouched(other);
    });

    for (const streaming of [true, false]) {
      it(`fails on a ${status} of the message request (${streaming ? 'streaming' : 'blocking'}) to another origin, which receives nothing`, async () => {
        const other = await agentAt({ name: 'Other', behaviour: behaviours.answer('should not run', null) });
        const agent = await agentAt({ name: 'Moving', streaming, behaviour: behaviours.answer('unused', null) });
        agent.setJsonRpcResponder((_request, response) => void response.status(status).set('location', `${other.url}/jsonrpc`).send(PLANTED));
        const registry = registryOf({ agent: { kind: 'a2a', url: agent.url, headers: { 'X-Api-Key': KEY } } });
        const error = await rejection(registry.get('agent').invoke(call()));
        expect(error).toMatchObject({ retryable: false, message: `A2A agent ${agent.url}: answered HTTP ${status}, a redirect; redirects are not followed (configure the final URL instead)` });
        expect(agent.requests.map((request) => request.method)).toEqual(['GET', 'POST']);
        expectUntouched(other);
        expect(other.messages).toEqual([]);
      });
    }
  }
});

describe('a2a targets: interface URLs of the card', () => {
  it('refuses an interface URL at another origin before sending; the planted body there never reaches an error', async () => {
    const foreign = await serverWith(planted);
    const agent = await agentAt({ name: 'Pointing', interfaceUrl: `${foreign.origin}/agent`, behaviour: behaviours.answer('unused', null) });
    const registry = registryOf({
      refused: { kind: 'a2a', url: agent.url, headers: { 'X-Api-Key': KEY } },
      allowed: { kind: 'a2a', url: agent.url, headers: { 'X-Api-Key': KEY }, allowedOrigins: [foreign.origin] },
    });
    const refused = await rejection(registry.get('refused').invoke(call()));
    expect(refused).toMatchObject({ retryable: false, message: `A2A agent ${agent.url}: refused to send to ${foreign.origin}: not the entry's origin and not listed in its allowedOrigins` });
    expectUntouched(foreign);

    // Listed: the request goes there (without the entry's key or the token), and its failure names the status only.
    const failed = await rejection(registry.get('allowed').invoke(call()));
    expect(failed).toMatchObject({ retryable: true, message: `A2A agent ${agent.url} answered HTTP 500 (the answer of another origin is not quoted)`, details: { status: 500 } });
    expect(foreign.requests).toHaveLength(1);
    expect(foreign.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(foreign.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('still quotes the answer of the entry\'s own origin', async () => {
    const agent = await agentAt({ name: 'Own', behaviour: behaviours.answer('unused', null) });
    agent.setJsonRpcResponder((_request, response) => void response.status(503).type('text/plain').send('down for maintenance'));
    const registry = registryOf({ agent: { kind: 'a2a', url: agent.url } });
    expect((await rejection(registry.get('agent').invoke(call()))).message).toMatch(/answered HTTP 503: .*down for maintenance/);
  });
});

describe('a2a targets: non-public addresses', () => {
  it('refuses an entry whose hostname resolves to loopback, before connecting', async () => {
    const agent = await agentAt({ name: 'Hidden', behaviour: behaviours.answer('unused', null) });
    const port = new URL(agent.url).port;
    const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const registry = registryOf({ agent: { kind: 'a2a', url: `http://agents.example.com:${port}/agent`, headers: { 'X-Api-Key': KEY } } }, resolver);
    const error = await rejection(registry.get('agent').invoke(call()));
    expect(error).toMatchObject({
      retryable: false,
      message: `A2A agent http://agents.example.com:${port}/agent: cannot fetch its agent card: refused to connect to agents.example.com: it is a loopback address, and the entry's own URL is not one`,
    });
    expectUntouched(agent);
  });

  it('refuses a hostname when any of its addresses is not allowed (one public, one link-local)', async () => {
    const resolver: Resolver = async () => [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }];
    const registry = registryOf({ agent: { kind: 'a2a', url: 'http://agents.example.com/agent' } }, resolver);
    expect((await rejection(registry.get('agent').invoke(call()))).message).toMatch(/refused to connect to agents\.example\.com: it is a link-local address/);
  });

  it('for an entry at 127.0.0.1: an interface resolving to 10.0.0.1 is refused before connecting; one resolving to loopback is allowed', async () => {
    const target = await agentAt({ name: 'Target', behaviour: behaviours.answer('via a name', null) });
    const port = new URL(target.url).port;
    const resolved: Record<string, string> = { 'rpc-private.example.com': '10.0.0.1', 'rpc-loopback.example.com': '127.0.0.1' };
    const lookups: string[] = [];
    const resolver: Resolver = async (hostname) => {
      lookups.push(hostname);
      return [{ address: resolved[hostname]!, family: 4 }];
    };
    const toPrivate = await agentAt({ name: 'ToPrivate', interfaceUrl: `http://rpc-private.example.com:${port}/agent`, behaviour: behaviours.answer('unused', null) });
    const toLoopback = await agentAt({ name: 'ToLoopback', interfaceUrl: `http://rpc-loopback.example.com:${port}/agent`, behaviour: behaviours.answer('unused', null) });
    const registry = registryOf(
      {
        private: { kind: 'a2a', url: toPrivate.url, allowedOrigins: [`http://rpc-private.example.com:${port}`] },
        loopback: { kind: 'a2a', url: toLoopback.url, allowedOrigins: [`http://rpc-loopback.example.com:${port}`] },
      },
      resolver,
    );
    const error = await rejection(registry.get('private').invoke(call()));
    expect(error).toMatchObject({ retryable: false, message: `A2A agent ${toPrivate.url}: refused to connect to rpc-private.example.com: it is a private address, and the entry's own URL is not one` });
    expectUntouched(target);

    const output = (await registry.get('loopback').invoke(call())) as { text: string };
    expect(output.text).toBe('via a name');
    expect(lookups).toEqual(['rpc-private.example.com', 'rpc-loopback.example.com']);
  });
});

describe('target policy', () => {
  it('classifies addresses, IPv4-mapped IPv6 as the IPv4 address it carries', () => {
    const cases: Record<string, string> = {
      '127.0.0.1': 'loopback', '127.8.9.10': 'loopback', '::1': 'loopback', '::ffff:127.0.0.1': 'loopback', '::ffff:7f00:1': 'loopback',
      '10.1.2.3': 'private', '172.16.0.1': 'private', '172.31.255.255': 'private', '192.168.1.1': 'private', '100.64.0.1': 'private', 'fc00::1': 'private', 'fd12:3456::1': 'private',
      '169.254.169.254': 'link-local', 'fe80::1': 'link-local', 'febf::1': 'link-local',
      '0.0.0.0': 'unspecified', '::': 'unspecified',
      '224.0.0.1': 'multicast', 'ff02::1': 'multicast', '255.255.255.255': 'reserved', '192.0.2.1': 'reserved', '2001:db8::1': 'reserved',
      '93.184.216.34': 'public', '172.32.0.1': 'public', '8.8.8.8': 'public', '2606:4700::1111': 'public', '::ffff:8.8.8.8': 'public', '64:ff9b::a00:1': 'private',
    };
    for (const [address, range] of Object.entries(cases)) expect([address, addressRange(address)]).toEqual([address, range]);
  });

  it('allows the range the entry names literally, and checks IP-literal URLs without a lookup', () => {
    const loopbackEntry = new TargetPolicy({ entryUrl: new URL('http://127.0.0.1:8080/agent') });
    expect(() => loopbackEntry.checkAddress('127.0.0.5', 'x')).not.toThrow();
    expect(() => loopbackEntry.checkAddress('10.0.0.1', 'x')).toThrow(TargetRefusedError);
    expect(() => new TargetPolicy({ entryUrl: new URL('http://localhost:1') }).checkAddress('::1', 'x')).not.toThrow();
    const publicEntry = new TargetPolicy({ entryUrl: new URL('https://agents.example.org'), allowedOrigins: ['http://[fe80::1]:9000'] });
    expect(() => publicEntry.checkUrl(new URL('https://agents.example.org/rpc'))).not.toThrow();
    expect(() => publicEntry.checkUrl(new URL('http://[fe80::1]:9000/rpc'))).not.toThrow();
    expect(() => publicEntry.checkAddress('127.0.0.1', 'x')).toThrow(/loopback/);
    expect(() => publicEntry.checkUrl(new URL('https://other.example.org'))).toThrow(/not listed in its allowedOrigins/);
  });

  it('validates allowedOrigins and tokenScopes in the registry', () => {
    const invalid = (entry: Record<string, unknown>): string => {
      try {
        createExecutorRegistry({ executors: { agent: { kind: 'a2a', url: 'https://agents.example.org', ...entry } as never } }, { baseDir: '.', env: {} });
      } catch (error) {
        expect(error).toBeInstanceOf(RegistryConfigError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(invalid({ allowedOrigins: ['https://rpc.example.org/'] })).toContain('allowedOrigins[0]: must be an exact origin: write https://rpc.example.org');
    expect(invalid({ allowedOrigins: ['ftp://rpc.example.org'] })).toContain('allowedOrigins[0]: must be an http: or https: origin');
    expect(invalid({ allowedOrigins: ['HTTPS://RPC.example.org:443'] })).toContain('write https://rpc.example.org');
    expect(invalid({ tokenScopes: ['two words'] })).toContain('tokenScopes');
  });
});
