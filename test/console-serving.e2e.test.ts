/**
 * How the API serves the console (issue #19; docs/guide/console.md), over HTTP without a browser:
 * `/` leads to it, its page, script and stylesheet come with the right types and the console's
 * strict Content-Security-Policy (API answers keep the API's), no path escapes apps/console/dist/,
 * the committed build is what the sources build, and it stays small.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from './support/service.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = fileURLToPath(new URL('../apps/console/dist/', import.meta.url));

/** The most the console may weigh, gzipped, bytes (docs/guide/console.md "Bundle size"). */
const MAX_GZIPPED_BYTES = 300 * 1024;

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.close();
});

/** GET `path` sent verbatim (no URL normalisation, unlike fetch): status, headers, body. */
function rawGet(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(svc.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The directives of a Content-Security-Policy header: name -> source list. */
function directives(header: string | null): Map<string, string[]> {
  const parsed = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) parsed.set(name, sources);
  }
  return parsed;
}

/** Asserts `header` is the console's CSP: scripts and connections to the service only, no inline or eval, never framed. */
function expectConsoleCsp(header: string | null): void {
  const csp = directives(header);
  expect(csp.get('script-src')).toEqual(["'self'"]);
  expect(csp.get('connect-src')).toEqual(["'self'"]);
  expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
  expect(header).not.toContain("'unsafe-inline'");
  expect(header).not.toContain("'unsafe-eval'");
}

describe('console serving', () => {
  it('redirects / to /console/', async () => {
    const response = await fetch(`${svc.baseUrl}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/console/');
  });

  it('serves the page at /console and /console/ with the console CSP', async () => {
    for (const path of ['/console', '/console/']) {
      const response = await fetch(`${svc.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toContain('<title>Switchyard console</title>');
      expect(html).toContain('<div id="app">');
      expectConsoleCsp(response.headers.get('content-security-policy'));
    }
  });

  it('serves the script and stylesheet the page links, with their types and the console CSP', async () => {
    const html = await (await fetch(`${svc.baseUrl}/console/`)).text();
    const script = /<script[^>]*src="([^"]+)"/.exec(html)?.[1];
    const stylesheet = /<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/.exec(html)?.[1];
    expect(script).toBe('/console/console.js');
    expect(stylesheet).toBe('/console/console.css');
    const js = await fetch(`${svc.baseUrl}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expectConsoleCsp(js.headers.get('content-security-policy'));
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${svc.baseUrl}${stylesheet}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expectConsoleCsp(css.headers.get('content-security-policy'));
  });

  it('keeps the API CSP on API answers', async () => {
    const response = await svc.api.get('/api/v1/workflows');
    expect(response.status).toBe(200);
    const csp = directives(response.headers.get('content-security-policy'));
    expect(csp.get('default-src')).toEqual(["'none'"]);
    // The API's policy lets nothing run: the console's script-src 'self' is not on it.
    expect(csp.has('script-src')).toBe(false);
  });

  it('never serves a file outside the build for a path that climbs out of /console/', async () => {
    const packageJson = await readFile(`${ROOT}package.json`, 'utf8');
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/%2E%2E/%2E%2E/%2E%2E/package.json',
      '/console/..%2fpackage.json',
      '/console/..%2f..%2f..%2fpackage.json',
      '/console/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/....//package.json',
      '/console/..\\..\\..\\package.json',
    ]) {
      const response = await rawGet(path);
      expect(response.status, path).toBe(404);
      expect(response.body, path).not.toContain('"workspaces"');
      expect(response.body, path).not.toBe(packageJson);
    }
  });

  it('answers 404 for a file the build does not have', async () => {
    const response = await fetch(`${svc.baseUrl}/console/nothing-here.js`);
    expect(response.status).toBe(404);
  });
});

describe('console build', () => {
  it('the committed apps/console/dist/ is what the sources build', async () => {
    const run = promisify(execFile);
    const result = await run(process.execPath, ['--import', 'tsx', 'apps/console/scripts/build.ts', '--check'], { cwd: ROOT }).catch(
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect((result as { code?: number }).code ?? 0, `${result.stdout}${result.stderr}`).toBe(0);
  });

  it('weighs at most 300 KiB gzipped', async () => {
    let gzipped = 0;
    const files = await readdir(DIST);
    expect(files).toEqual(expect.arrayContaining(['index.html', 'console.js', 'console.css']));
    for (const name of files) gzipped += gzipSync(await readFile(`${DIST}${name}`), { level: 9 }).byteLength;
    expect(gzipped).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
  });
});
