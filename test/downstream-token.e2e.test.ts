/**
 * Downstream tokens through the service as the server composes it (`loadConfig` → `openServices`
 * → `buildApp`, issue 9 item 7): JWT authentication on, `SWITCHYARD_DOWNSTREAM_TOKEN_SECRET` set,
 * a webhook step after a HITL gate. The webhook receives a token minted from the identity of the
 * run's trigger — not of the person who approved the gate — minted after the approval, not at the
 * trigger; the run stores neither the caller's token nor the minted one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SignJWT, jwtVerify } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, openServices, type OpenServices } from '@switchyard/api';
import { WebhookServer, json } from '../packages/runner/src/testing/webhook-server.ts';
import { CANVAS, echoStep, uniqueName, wf } from './support/service.ts';
import { storedFiles } from './support/data-dir-scan.ts';

const API_SECRET = 'api-secret-for-the-test-of-32-bytes+';
const DOWNSTREAM_SECRET = 'downstream-secret-for-the-test-32b+';

let webhook: WebhookServer;
let dataDir: string;
let services: OpenServices;
let app: FastifyInstance;
let baseUrl: string;

function token(sub: string, username: string): Promise<string> {
  return new SignJWT({ preferred_username: username, scope: 'workflows-read workflows-write workflows-control' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(API_SECRET));
}

async function call(method: string, path: string, bearer: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

beforeAll(async () => {
  webhook = await WebhookServer.start();
  webhook.respond(json(200, { delivered: true }));
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-downstream-'));
  // The example registry's `notify` entry reads its URL from this variable when the registry loads.
  process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'] = webhook.url('/hook');
  const config = loadConfig({
    DATA_DIR: dataDir,
    SWITCHYARD_AUTH: 'jwt',
    SWITCHYARD_JWT_SECRET: API_SECRET,
    SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: DOWNSTREAM_SECRET,
    SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE: 'order-service',
    SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS: '60',
    SWITCHYARD_SWEEP_INTERVAL_MS: '50',
  });
  const logger = pino({ level: 'silent' });
  services = await openServices(config, logger);
  app = await buildApp({ services, logger, docs: false, authenticator: services.authenticator });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await app?.close();
  await services?.close();
  await webhook?.close();
  delete process.env['SWITCHYARD_EXAMPLE_WEBHOOK_URL'];
  await rm(dataDir, { recursive: true, force: true });
});

describe('downstream tokens', () => {
  it('carry the trigger\'s identity to a webhook after a HITL pause, minted after the approval', async () => {
    const ada = await token('u-ada', 'ada');
    const grace = await token('u-grace', 'grace');
    const created = await call('POST', wf(), ada, {
      name: uniqueName('downstream'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Send?' } }), { name: 'Notify', nodeType: 'step', executorKey: 'notify', config: { event: 'sent' } }],
    });
    expect(created.status).toBe(201);
    const workflowId = created.body.id as string;
    expect((await call('POST', wf(`/${workflowId}/toggle`), ada, { enabled: true })).status).toBe(200);
    const triggered = await call('POST', wf(`/${workflowId}/runs`), ada, {});
    expect(triggered.status).toBe(202);
    const runId = triggered.body.runId as string;

    let run: any;
    for (let i = 0; i < 500 && !(run?.pendingRequirements?.length > 0); i++) {
      run = (await call('GET', wf(`/${workflowId}/runs/${runId}`), ada)).body;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(webhook.requests).toHaveLength(0);
    const approvedAt = Math.floor(Date.now() / 1000);
    expect((await call('POST', wf(`/${workflowId}/runs/${runId}/approve`), grace, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' })).status).toBe(200);
    for (let i = 0; i < 500 && !['completed', 'failed'].includes(run.status); i++) {
      run = (await call('GET', wf(`/${workflowId}/runs/${runId}`), ada)).body;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(run.status).toBe('completed');

    const authorization = webhook.requests.at(-1)!.headers.authorization!;
    expect(authorization).toMatch(/^Bearer /);
    const minted = authorization.slice('Bearer '.length);
    const { payload } = await jwtVerify(minted, new TextEncoder().encode(DOWNSTREAM_SECRET), { audience: 'order-service', issuer: 'switchyard' });
    expect(payload).toMatchObject({ sub: 'u-ada', preferred_username: 'ada', switchyard_run_id: runId, scope: 'workflows-read workflows-write workflows-control' });
    expect(payload.iat).toBeGreaterThanOrEqual(approvedAt);
    expect(payload.exp! - payload.iat!).toBe(60);

    // Neither the caller's token nor the minted one is stored anywhere under DATA_DIR, raw or decoded
    // (the decoding works: the run's identity is found in it).
    const files = await storedFiles(dataDir);
    const payloads = files.flatMap((file) => file.payloads);
    expect(payloads.some((payload) => payload.includes('u-ada'))).toBe(true);
    for (const file of files) {
      for (const token of [minted, ada]) {
        expect(file.content.includes(token), file.path).toBe(false);
        expect(file.payloads.some((payload) => payload.includes(token)), file.path).toBe(false);
      }
    }
  });
});
