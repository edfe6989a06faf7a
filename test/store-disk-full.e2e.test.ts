/**
 * The real service process (`npm start`'s server) on the embedded store, with DATA_DIR on a small
 * tmpfs of its own (private mount namespace; needs root and `unshare`, skipped otherwise): while
 * the disk is full, writes answer 503 `store_unavailable` with Retry-After and reads keep working;
 * once space is freed, writes succeed again without a restart, and nothing refused was stored.
 * `/readyz` answers 503 naming the store while the disk is full (`/livez` stays 200), and 200 again
 * once space is freed.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fillDisk, mountPrivateTmpfs, privateTmpfsUnavailable, type PrivateTmpfs } from '../packages/store/src/embedded/fixtures/private-tmpfs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const skipReason = privateTmpfsUnavailable();
if (skipReason) console.warn(`store disk-full e2e test skipped: ${skipReason}`);

let server: PrivateTmpfs | undefined;
afterAll(async () => {
  await server?.close();
});

/** Starts the server in a private namespace with DATA_DIR on a 1 MiB tmpfs; resolves with its base URL once it listens. */
async function startServerOnTmpfs(): Promise<{ tmpfs: PrivateTmpfs; baseUrl: string }> {
  const tmpfs = await mountPrivateTmpfs(1024, {
    command: [process.execPath, '--import', 'tsx', join(ROOT, 'apps/api/src/server.ts')],
    env: (mountPoint) => ({ ...process.env, MONGODB_URI: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', DATA_DIR: mountPoint }),
  });
  for (let i = 0; ; i++) {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(tmpfs.output());
    if (match) return { tmpfs, baseUrl: match[1]! };
    if (tmpfs.child.exitCode !== null || i > 400) throw new Error(`server did not start:\n${tmpfs.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${baseUrl}/api/v1/workflows${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** GET `path` of the service (a probe): status and JSON body. */
async function probe(baseUrl: string, path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`);
  return { status: response.status, body: await response.json() };
}

/** Polls /readyz (its answer is cached for 1 s) until it answers `status`; throws after 10 s. */
async function untilReadiness(baseUrl: string, status: number): Promise<{ status: number; body: any }> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const answer = await probe(baseUrl, '/readyz');
    if (answer.status === status) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz answered ${answer.status} ${JSON.stringify(answer.body)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const workflow = (name: string) => ({ name, canvas: { viewport: {} }, nodes: [{ name: 'only', nodeType: 'step', executorKey: 'echo' }] });

describe.skipIf(skipReason)('the service on a full disk', () => {
  it('answers 503 store_unavailable while the disk is full and accepts writes again once space is freed', async () => {
    const started = await startServerOnTmpfs();
    server = started.tmpfs;
    const { baseUrl } = started;
    expect((await call(baseUrl, 'POST', '', workflow('before the disk filled'))).status).toBe(201);
    expect((await untilReadiness(baseUrl, 200)).body.checks.store.ok).toBe(true);

    const filler = join(server.path, 'filler');
    fillDisk(filler);
    // The journal's last page may still have room for a write or two; the first one past it is refused.
    const stored = ['before the disk filled'];
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; !refused; i++) {
      if (i > 100) throw new Error('writes never failed on the full disk');
      const answer = await call(baseUrl, 'POST', '', workflow(`written on a full disk ${i}`));
      if (answer.status === 201) stored.push(`written on a full disk ${i}`);
      else refused = answer;
    }
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body.detail.error).toBe('store_unavailable');
    expect(refused.body.detail.message).toContain('no space left on device (ENOSPC); writes are refused until space is free');
    // The data directory is named, not shown (docs/operations/security.md).
    expect(refused.body.detail.message).toContain('$DATA_DIR');
    expect(refused.body.detail.message).not.toContain(server.path);
    const refusedName = `written on a full disk ${stored.length - 1}`;
    expect((await call(baseUrl, 'POST', '', workflow(refusedName))).status).toBe(503);
    const listed = await call(baseUrl, 'GET', '?perPage=100');
    expect(listed.status).toBe(200);

    // Not ready while the store refuses writes, and the answer names the store; alive all along.
    const unready = await untilReadiness(baseUrl, 503);
    expect(unready.body.status).toBe('unavailable');
    expect(unready.body.checks.store.ok).toBe(false);
    expect(unready.body.checks.store.error).toContain('ENOSPC');
    expect(unready.body.checks.store.error).not.toContain(server.path);
    for (const name of ['recovery', 'timeoutSweeper', 'retention']) expect(unready.body.checks[name]).toMatchObject({ running: true });
    expect(await probe(baseUrl, '/livez')).toEqual({ status: 200, body: { status: 'ok' } });

    rmSync(filler);
    expect((await untilReadiness(baseUrl, 200)).body.checks.store.ok).toBe(true);
    expect((await call(baseUrl, 'POST', '', workflow('after space was freed'))).status).toBe(201);
    stored.push('after space was freed');
    const names = (await call(baseUrl, 'GET', '?perPage=100')).body.workflows.map((item: { name: string }) => item.name);
    expect([...names].sort()).toEqual([...stored].sort());
    expect(names).not.toContain(refusedName);
  }, 60_000);
});
