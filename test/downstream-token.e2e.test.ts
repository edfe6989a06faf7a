/**
 * Downstream tokens through the service as the server composes it (`loadConfig` → `openServices`
 * → `buildApp`, issue 9 item 7): JWT authentication on, `SWITCHYARD_DOWNSTREAM_TOKEN_SECRET` set,
 * two webhook steps (different origins) after a HITL gate. Each webhook receives a token minted
 * from the identity of the run's trigger — not of the person who approved the gate — minted after
 * the approval, not at the trigger, and bound to it (security issue item 7): `aud` its own origin,
 * `azp` its executor key, `scope` only what its entry declares; the token of one is refused by
 * the other checking `aud`. The run stores neither the caller's token nor the minted ones.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
let audit: WebhookServer;
let dataDir: string;
let registryDir: string;
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
  audit = await WebhookServer.start();
  audit.respond(json(200, { audited: true }));
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-downstream-'));
  registryDir = await mkdtemp(join(tmpdir(), 'switchyard-downstream-registry-'));
  // Two webhooks on two origins; `notify` declares one scope, `audit` none.
  await writeFile(
    join(registryDir, 'executors.json'),
    JSON.stringify({
      executors: {
        notify: { kind: 'http', url: webhook.url('/hook'), tokenScopes: ['workflows-read'] },
        audit: { kind: 'http', url: audit.url('/audit') },
        echo: { kind: 'builtin', name: 'echo' },
      },
    }),
  );
  const config = loadConfig({
    DATA_DIR: dataDir,
    SWITCHYARD_EXECUTORS: join(registryDir, 'executors.json'),
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
  await audit?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(registryDir, { recursive: true, force: true });
});

describe('downstream tokens', () => {
  it('carry the trigger\'s identity to each webhook after a HITL pause, minted after the approval, bound to that webhook', async () => {
    const ada = await token('u-ada', 'ada');
    const grace = await token('u-grace', 'grace');
    const created = await call('POST', wf(), ada, {
      name: uniqueName('downstream'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Send?' } }), { name: 'Notify', nodeType: 'step', executorKey: 'notify', config: { event: 'sent' } }, { name: 'Audit', nodeType: 'step', executorKey: 'audit', config: { event: 'audited' } }],
    });
    expect(created.status).toBe(201);
    const workflowId = created.body.id as string;
    expect((await call('POST', wf(`/${workflowId}/toggle`), ada, { enabled: true })).status).toBe(200);
    // grace decides the gate: an operator of the workflow (issue #18).
    expect((await call('PUT', wf(`/${workflowId}/access`), ada, { owners: ['user:u-ada'], operators: ['user:u-grace'] })).status).toBe(200);
    const triggered = await call('POST', wf(`/${workflowId}/runs`), ada, {});
    expect(triggered.status).toBe(202);
    const runId = triggered.body.runId as string;

    let run: any;
    for (let i = 0; i < 500 && !(run?.pendingRequirements?.length > 0); i++) {
      run = (await call('GET', wf(`/${workflowId}/runs/${runId}`), ada)).body;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(webhook.requests).toHaveLength(0);
    expect(audit.requests).toHaveLength(0);
    const approvedAt = Math.floor(Date.now() / 1000);
    expect((await call('POST', wf(`/${workflowId}/runs/${runId}/approve`), grace, { stepId: run.pendingRequirements[0].stepId, resolution: 'confirm' })).status).toBe(200);
    for (let i = 0; i < 500 && !['completed', 'failed'].includes(run.status); i++) {
      run = (await call('GET', wf(`/${workflowId}/runs/${runId}`), ada)).body;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(run.status).toBe('completed');

    const key = new TextEncoder().encode(DOWNSTREAM_SECRET);
    const bearerOf = (server: WebhookServer): string => {
      const authorization = server.requests.at(-1)!.headers.authorization!;
      expect(authorization).toMatch(/^Bearer /);
      return authorization.slice('Bearer '.length);
    };
    const minted = bearerOf(webhook);
    const mintedForAudit = bearerOf(audit);
    const notifyOrigin = new URL(webhook.url()).origin;
    const auditOrigin = new URL(audit.url()).origin;
    expect(notifyOrigin).not.toBe(auditOrigin);

    const { payload } = await jwtVerify(minted, key, { audience: notifyOrigin, issuer: 'switchyard' });
    // Scopes: only the one its entry declares, not all of the trigger's.
    expect(payload).toMatchObject({ sub: 'u-ada', preferred_username: 'ada', switchyard_run_id: runId, aud: notifyOrigin, azp: 'notify', scope: 'workflows-read' });
    expect(payload.iat).toBeGreaterThanOrEqual(approvedAt);
    expect(payload.exp! - payload.iat!).toBe(60);
    const forAudit = (await jwtVerify(mintedForAudit, key, { audience: auditOrigin, issuer: 'switchyard' })).payload;
    expect(forAudit).toMatchObject({ sub: 'u-ada', aud: auditOrigin, azp: 'audit' });
    expect(forAudit).not.toHaveProperty('scope');

    // A token handed to one webhook is refused by the other, checking its own audience; the
    // configured SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE is no longer the audience of webhooks.
    await expect(jwtVerify(minted, key, { audience: auditOrigin, issuer: 'switchyard' })).rejects.toThrow(/"aud"/);
    await expect(jwtVerify(mintedForAudit, key, { audience: notifyOrigin, issuer: 'switchyard' })).rejects.toThrow(/"aud"/);
    await expect(jwtVerify(minted, key, { audience: 'order-service' })).rejects.toThrow(/"aud"/);

    // Neither the caller's token nor the minted one is stored anywhere under DATA_DIR, raw or decoded
    // (the decoding works: the run's identity is found in it).
    const files = await storedFiles(dataDir);
    const payloads = files.flatMap((file) => file.payloads);
    expect(payloads.some((payload) => payload.includes('u-ada'))).toBe(true);
    for (const file of files) {
      for (const token of [minted, mintedForAudit, ada]) {
        expect(file.content.includes(token), file.path).toBe(false);
        expect(file.payloads.some((payload) => payload.includes(token)), file.path).toBe(false);
      }
    }
  });
});
