/**
 * The `a2a` executor called directly, against real A2A agents built with the SDK's server side
 * (`test/support/a2a-agents.ts`): the message it sends (parts, metadata, stable message ids,
 * headers and the downstream token), how task states become outputs or failures (retryable or
 * not), polling of a task that is still working, cancellation (`CancelTask` reaches the agent),
 * the card cache, the catalogue, and the entry's secrets never reaching errors, outputs or logs.
 * Failover and node-run records through the API are in `test/a2a-executor.e2e.test.ts`.
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import {
  agentUrl,
  behaviours,
  dataPart,
  downAgentUrl,
  freePort,
  messageText,
  startAgent,
  textPart,
  urlPart,
  type TestAgent,
} from '../../../../../test/support/a2a-agents.ts';
import { timeoutReason } from '../shared/abort.ts';
import { METADATA_KEYS, messageParts } from './a2a-message.ts';
import { REDACTED } from '../shared/redact.ts';
import { createExecutorRegistry } from '../registry.ts';
import { ExecutorError } from '../types.ts';
import type { ExecutorCall, ExecutorRegistry } from '../types.ts';
import { captureLogs } from '../../testing/log-capture.ts';

const SECRET = `sk-${randomBytes(12).toString('hex')}`;
const QUERY_SECRET = `q-${randomBytes(12).toString('hex')}`;

let agent: TestAgent;
let slow: TestAgent;
let registry: ExecutorRegistry;
const captured = captureLogs();
let downUrl: string;

function call(args: Record<string, unknown> = {}, options: { signal?: AbortSignal; attempt?: number; downstreamToken?: string; runId?: string } = {}): ExecutorCall {
  return {
    arguments: args,
    input: { notSent: 'the step input' },
    attempt: options.attempt ?? 1,
    signal: options.signal ?? new AbortController().signal,
    ...(options.downstreamToken === undefined ? {} : { downstreamToken: options.downstreamToken }),
    context: { runId: options.runId ?? 'run-1', nodeId: 'node-1', nodeName: 'Ask', iterationPath: '2' },
  };
}

async function rejection(promise: Promise<unknown>): Promise<ExecutorError> {
  const error: unknown = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(ExecutorError);
  // The secrets are nowhere in the error object: message, stack, details, cause chain.
  const text = inspect(error, { depth: 20, showHidden: true });
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(QUERY_SECRET);
  return error as ExecutorError;
}

beforeAll(async () => {
  agent = await startAgent({
    name: 'Summarizer',
    description: 'Summarizes text',
    version: '2.1.0',
    skills: [{ id: 'summarize', name: 'Summarize', description: 'Summarizes a text', tags: ['text', 'nlp'] }],
    behaviour: behaviours.answer('a summary', { words: 2 }),
  });
  slow = await startAgent({ name: 'Batch', streaming: false, behaviour: behaviours.finishLater(300, 'done later') });
  downUrl = await downAgentUrl();
  registry = createExecutorRegistry(
    {
      executors: {
        agent: { kind: 'a2a', url: `${agent.url}?key=\${QUERY_KEY}`, headers: { 'X-Api-Key': '${AGENT_KEY}' } },
        own: { kind: 'a2a', url: agent.url, headers: { Authorization: 'Basic ${AGENT_KEY}' } },
        batch: { kind: 'a2a', url: slow.url },
        down: { kind: 'a2a', url: downUrl, description: 'An agent that is down' },
      },
    },
    { baseDir: '.', env: { AGENT_KEY: SECRET, QUERY_KEY: QUERY_SECRET }, logger: captured.logger },
  );
});

afterEach(() => {
  agent.setBehaviour(behaviours.answer('a summary', { words: 2 }));
  agent.setJsonRpcResponder(undefined);
});

afterAll(async () => {
  await registry?.close();
  await agent?.close();
  await slow?.close();
  expect(captured.text()).toContain('calling A2A agent');
  expect(captured.text()).not.toContain(SECRET);
  expect(captured.text()).not.toContain(QUERY_SECRET);
});

describe('a2a executor: the message', () => {
  it('maps the config: a string text becomes a text part, the rest one data part; else all of it is data', () => {
    expect(messageParts({ text: 'hi', lang: 'en', n: 2 }).map((part) => part.content)).toEqual([
      { $case: 'text', value: 'hi' },
      { $case: 'data', value: { lang: 'en', n: 2 } },
    ]);
    expect(messageParts({ text: 'only text' }).map((part) => part.content)).toEqual([{ $case: 'text', value: 'only text' }]);
    expect(messageParts({ text: 42, x: 1 }).map((part) => part.content)).toEqual([{ $case: 'data', value: { text: 42, x: 1 } }]);
    expect(messageParts({}).map((part) => part.content)).toEqual([{ $case: 'data', value: {} }]);
  });

  it('sends the parts with run metadata and a message id stable per attempt, never the step input', async () => {
    const before = agent.messages.length;
    await registry.get('agent').invoke(call({ text: 'Summarize this', maxWords: 5 }));
    await registry.get('agent').invoke(call({ text: 'Summarize this', maxWords: 5 }));
    await registry.get('agent').invoke(call({ text: 'Summarize this', maxWords: 5 }, { attempt: 2 }));
    const [first, again, second] = agent.messages.slice(before);
    expect(first!.parts.map((part) => part.content)).toEqual([
      { $case: 'text', value: 'Summarize this' },
      { $case: 'data', value: { maxWords: 5 } },
    ]);
    expect(first!.metadata).toEqual({ [METADATA_KEYS.runId]: 'run-1', [METADATA_KEYS.nodeId]: 'node-1', [METADATA_KEYS.iterationPath]: '2', [METADATA_KEYS.attempt]: 1 });
    expect(JSON.stringify(first)).not.toContain('the step input');
    expect(again!.messageId).toBe(first!.messageId);
    expect(second!.messageId).not.toBe(first!.messageId);
  });

  it('refuses an interface URL of another origin; one listed in allowedOrigins gets neither the entry headers nor the token', async () => {
    const elsewhere = await startAgent({ name: 'Elsewhere', behaviour: behaviours.answer('from elsewhere', null) });
    const pointing = await startAgent({ name: 'Pointing', interfaceUrl: elsewhere.url, behaviour: behaviours.answer('unused', null) });
    const local = createExecutorRegistry(
      {
        executors: {
          pointing: { kind: 'a2a', url: pointing.url, headers: { 'X-Api-Key': 'key-1234' } },
          allowing: { kind: 'a2a', url: pointing.url, headers: { 'X-Api-Key': 'key-1234' }, allowedOrigins: [elsewhere.origin] },
        },
      },
      { baseDir: '.', env: {} },
    );
    try {
      const refused = await rejection(local.get('pointing').invoke(call({ text: 'hi' }, { downstreamToken: 'token-abcd' })));
      expect(refused).toMatchObject({
        retryable: false,
        message: `A2A agent ${pointing.url}: refused to send to ${elsewhere.origin}: not the entry's origin and not listed in its allowedOrigins`,
      });
      expect(elsewhere.requests).toEqual([]);

      const output = (await local.get('allowing').invoke(call({ text: 'hi' }, { downstreamToken: 'token-abcd' }))) as { text: string };
      expect(output.text).toBe('from elsewhere');
      expect(pointing.requests[0]!.headers).toMatchObject({ 'x-api-key': 'key-1234', authorization: 'Bearer token-abcd' });
      expect(elsewhere.requests.length).toBeGreaterThan(0);
      for (const request of elsewhere.requests) {
        expect(request.headers['x-api-key']).toBeUndefined();
        expect(request.headers.authorization).toBeUndefined();
      }
    } finally {
      await local.close();
      await pointing.close();
      await elsewhere.close();
    }
  });

  it('sends the entry headers and the downstream token on every request, the card fetch included', async () => {
    const fresh = await startAgent({ name: 'Fresh', behaviour: behaviours.answer('ok', null) });
    const local = createExecutorRegistry(
      { executors: { fresh: { kind: 'a2a', url: fresh.url, headers: { 'X-Api-Key': 'key-1234' } } } },
      { baseDir: '.', env: {} },
    );
    try {
      await local.get('fresh').invoke(call({ text: 'hi' }, { downstreamToken: 'token-abcd' }));
      expect(fresh.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /agent/.well-known/agent-card.json', 'POST /agent/jsonrpc']);
      for (const request of fresh.requests) {
        expect(request.headers).toMatchObject({ 'x-api-key': 'key-1234', authorization: 'Bearer token-abcd', 'user-agent': expect.stringMatching(/^switchyard\//) });
      }
    } finally {
      await local.close();
      await fresh.close();
    }
  });

  it('keeps an Authorization header of the entry instead of the downstream token', async () => {
    const before = agent.requests.length;
    await registry.get('own').invoke(call({ text: 'hi' }, { downstreamToken: 'token-abcd' }));
    const sent = agent.requests.slice(before).filter((request) => request.method === 'POST');
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) expect(request.headers.authorization).toBe(`Basic ${SECRET}`);
  });
});

describe('a2a executor: answers', () => {
  it('outputs a completed task: artifacts, text, data and the agent', async () => {
    const output = (await registry.get('agent').invoke(call({ text: 'Summarize' }))) as Record<string, unknown>;
    expect(output).toEqual({
      taskId: expect.any(String),
      contextId: expect.any(String),
      state: 'completed',
      artifacts: [{ name: 'result', parts: [{ kind: 'text', text: 'a summary' }, { kind: 'data', data: { words: 2 } }] }],
      message: null,
      text: 'a summary',
      data: { words: 2 },
      agent: { name: 'Summarizer', url: agent.url },
    });
    expect(JSON.parse(JSON.stringify(output))).toEqual(output);
  });

  it('joins the text of every artifact and the final message, and converts file parts', async () => {
    agent.setBehaviour(async (turn) => {
      turn.start();
      turn.artifact([textPart('part one'), urlPart('https://files.example/report.pdf', 'application/pdf', 'report.pdf')], 'report');
      turn.artifact([dataPart([1, 2]), textPart('part two')]);
      turn.status(TaskState.TASK_STATE_COMPLETED, 'all done');
    });
    const output = (await registry.get('agent').invoke(call({ text: 'go' }))) as Record<string, any>;
    expect(output.text).toBe('part one\npart two\nall done');
    expect(output.data).toEqual([1, 2]);
    expect(output.artifacts[0].parts[1]).toEqual({ kind: 'file', uri: 'https://files.example/report.pdf', mediaType: 'application/pdf', name: 'report.pdf' });
    expect(output.artifacts[1]).not.toHaveProperty('name');
    expect(output.message).toEqual({ parts: [{ kind: 'text', text: 'all done' }] });
  });

  it('takes a direct message reply as a completed result', async () => {
    agent.setBehaviour(behaviours.reply('just a message'));
    const output = (await registry.get('agent').invoke(call({ text: 'hi' }))) as Record<string, unknown>;
    expect(output).toMatchObject({ taskId: null, state: 'completed', artifacts: [], message: { parts: [{ kind: 'text', text: 'just a message' }] }, text: 'just a message', data: null });
  });

  it('polls GetTask when a non-streaming agent answers with a task still working', async () => {
    const output = (await registry.get('batch').invoke(call({ text: 'batch job' }))) as Record<string, unknown>;
    expect(output).toMatchObject({ state: 'completed', text: 'done later', agent: { name: 'Batch' } });
    expect(slow.requests.filter((request) => request.method === 'POST').length).toBeGreaterThan(1);
  });
});

describe('a2a executor: failures', () => {
  it('fails a failed task as retryable, with the agent\'s status message', async () => {
    agent.setBehaviour(behaviours.fail('the model is overloaded'));
    const error = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`A2A agent ${agent.url} failed the task: the model is overloaded`);
  });

  it('fails a rejected or self-canceled task as not retryable', async () => {
    agent.setBehaviour(behaviours.reject('I do not do that'));
    const rejected = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(rejected).toMatchObject({ retryable: false, message: `A2A agent ${agent.url} rejected the task: I do not do that` });
    agent.setBehaviour(async (turn) => {
      turn.start();
      turn.status(TaskState.TASK_STATE_CANCELED, 'shutting down');
    });
    expect(await rejection(registry.get('agent').invoke(call({ text: 'x' })))).toMatchObject({ retryable: false, message: expect.stringContaining('canceled the task: shutting down') });
  });

  it('fails input-required (and auth-required) as not retryable, naming the state and the question', async () => {
    agent.setBehaviour(behaviours.askForInput('Which customer do you mean?'));
    const error = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(`A2A agent ${agent.url} stopped in task state input-required, asking: Which customer do you mean?; a step cannot answer an agent, so the attempt fails`);
    agent.setBehaviour(async (turn) => {
      turn.start();
      turn.status(TaskState.TASK_STATE_AUTH_REQUIRED);
    });
    expect((await rejection(registry.get('agent').invoke(call({ text: 'x' })))).message).toContain('task state auth-required, without saying what');
  });

  it('fails JSON-RPC errors as not retryable, except internal errors; HTTP 5xx as retryable', async () => {
    const rpcError = (code: number, message: string) => () => agent.setJsonRpcResponder((_request, response) => {
      response.status(200).json({ jsonrpc: '2.0', id: null, error: { code, message } });
    });
    rpcError(-32602, 'invalid params: text too long')();
    const invalid = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(invalid).toMatchObject({ retryable: false, message: `A2A agent ${agent.url} answered JSON-RPC error -32602: invalid params: text too long` });
    rpcError(-32603, 'internal error')();
    expect(await rejection(registry.get('agent').invoke(call({ text: 'x' })))).toMatchObject({ retryable: true });
    agent.setJsonRpcResponder((_request, response) => void response.status(503).type('text/plain').send('maintenance'));
    const unavailable = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(unavailable.retryable).toBe(true);
    expect(unavailable.message).toMatch(new RegExp(`^A2A agent ${agent.url} answered HTTP 503: .*maintenance`));
    agent.setJsonRpcResponder((_request, response) => void response.status(401).json({ error: 'who are you' }));
    expect(await rejection(registry.get('agent').invoke(call({ text: 'x' })))).toMatchObject({ retryable: false, message: expect.stringContaining('answered HTTP 401') });
  });

  it('fails as retryable when the agent cannot be reached, naming its origin only', async () => {
    const error = await rejection(registry.get('down').invoke(call({ text: 'x' })));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(new RegExp(`^A2A agent ${downUrl}: cannot fetch its agent card: .*ECONNREFUSED`));
  });

  it('fetches the card again after a failure to connect', async () => {
    const port = await freePort();
    const local = createExecutorRegistry({ executors: { moving: { kind: 'a2a', url: agentUrl(port) } } }, { baseDir: '.', env: {} });
    try {
      expect((await rejection(local.get('moving').invoke(call({ text: 'x' })))).retryable).toBe(true);
      const first = await startAgent({ name: 'First', port, behaviour: behaviours.answer('one', null) });
      expect(await local.get('moving').invoke(call({ text: 'x' }))).toMatchObject({ agent: { name: 'First' } });
      await first.close();
      expect(await rejection(local.get('moving').invoke(call({ text: 'x' })))).toMatchObject({ retryable: true, message: expect.stringContaining('cannot be reached') });
      const second = await startAgent({ name: 'Second', port, behaviour: behaviours.answer('two', null) });
      try {
        expect(await local.get('moving').invoke(call({ text: 'x' }))).toMatchObject({ text: 'two', agent: { name: 'Second' } });
        expect(second.requests[0]!.path).toBe('/agent/.well-known/agent-card.json');
      } finally {
        await second.close();
      }
    } finally {
      await local.close();
    }
  });
});

describe('a2a executor: cancellation', () => {
  it('aborts the stream and sends CancelTask to the agent when the call is cancelled', async () => {
    agent.setBehaviour(behaviours.hang());
    const controller = new AbortController();
    const pending = registry.get('agent').invoke(call({ text: 'long job' }, { signal: controller.signal, runId: 'run-cancelled' }));
    // Once the agent streamed its working task, the executor knows the task id.
    await expect.poll(() => agent.eventsWritten('run-cancelled'), { timeout: 5_000 }).toBeGreaterThan(0);
    controller.abort();
    const error = await rejection(pending);
    expect(error).toMatchObject({ message: 'cancelled', retryable: false });
    // Sent before the call rejected (at most CANCEL_TIMEOUT_MS is waited for it).
    expect(agent.cancelledTasks.length).toBeGreaterThan(0);
    expect(await agent.nextCancel()).toEqual(expect.any(String));
  });

  it('reports a timeout reason on the signal as a retryable timeout, and still cancels the task', async () => {
    agent.setBehaviour(behaviours.hang());
    const controller = new AbortController();
    const pending = registry.get('agent').invoke(call({ text: 'long job' }, { signal: controller.signal, runId: 'run-timed-out' }));
    await expect.poll(() => agent.eventsWritten('run-timed-out'), { timeout: 5_000 }).toBeGreaterThan(0);
    controller.abort(timeoutReason(1000));
    const error = await rejection(pending);
    expect(error).toMatchObject({ message: `A2A agent ${agent.url} timed out after 1 s`, retryable: true });
    expect(await agent.nextCancel()).toEqual(expect.any(String));
  });
});

describe('a2a executor: secrets and the catalogue', () => {
  it('redacts the entry secrets from errors and outputs', async () => {
    agent.setBehaviour(behaviours.fail(`bad key ${SECRET} for ?key=${QUERY_SECRET}`));
    const error = await rejection(registry.get('agent').invoke(call({ text: 'x' })));
    expect(error.message).toContain(REDACTED);
    agent.setBehaviour(behaviours.answer(`echo ${SECRET}`, { key: QUERY_SECRET }));
    const output = JSON.stringify(await registry.get('agent').invoke(call({ text: 'x' })));
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain(QUERY_SECRET);
    expect(output).toContain(REDACTED);
  });

  it("describes an agent with its card's name, description, version and skills; the URL without its query", async () => {
    const described = await registry.describe({ kind: 'a2a' });
    expect(described.find((entry) => entry.key === 'agent')).toEqual({
      key: 'agent',
      kind: 'a2a',
      description: 'Summarizes text',
      available: true,
      agent: {
        name: 'Summarizer',
        description: 'Summarizes text',
        version: '2.1.0',
        skills: [{ id: 'summarize', name: 'Summarize', description: 'Summarizes a text', tags: ['text', 'nlp'] }],
        url: agent.url,
      },
    });
    expect(JSON.stringify(described)).not.toContain(QUERY_SECRET);
  });

  it('describes an unreachable agent as unavailable, with the reason', async () => {
    const [down] = (await registry.describe({ kind: 'a2a' })).filter((entry) => entry.key === 'down');
    expect(down).toMatchObject({ kind: 'a2a', description: 'An agent that is down', available: false, error: expect.stringContaining('ECONNREFUSED') });
    expect(down).not.toHaveProperty('agent');
  });
});

describe('a2a executor: the registry', () => {
  it('sends what the agent is asked in its text part', async () => {
    agent.setBehaviour(behaviours.echo());
    const output = (await registry.get('agent').invoke(call({ text: 'repeat me' }))) as { text: string };
    expect(output.text).toContain('repeat me');
    expect(messageText(agent.messages.at(-1)!)).toBe('repeat me');
  });

  it('refuses calls once the registry is closed', async () => {
    const local = createExecutorRegistry({ executors: { gone: { kind: 'a2a', url: agent.url } } }, { baseDir: '.', env: {} });
    await local.close();
    const error = await rejection(local.get('gone').invoke(call({ text: 'x' })));
    expect(error).toMatchObject({ retryable: false, message: 'executor registry is closed' });
  });
});
