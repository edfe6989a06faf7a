/**
 * The console in a real browser (issue #19; docs/guide/console.md), shell level: it loads cleanly
 * under its CSP, its navigation works from the keyboard, signing in takes a person from "Sign in
 * needed" to their workflows without the credential ever reaching a URL, and axe finds no serious
 * accessibility problem. One headless Chromium for the file (test/support/browser.ts), a fresh
 * context per test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ApiKeyVerifier, Authenticator, newApiKey } from '@switchyard/api';
import { checkAccessibility, launchBrowser, openConsole, TOKEN_KEY, type ConsolePage, type PageWindow } from './support/browser.ts';
import { startService, type TestService } from './support/service.ts';

const SCOPES = ['workflows-read', 'workflows-write', 'workflows-control'];
const alice = newApiKey('alice', SCOPES, { subject: 'alice' });

let browser: Browser;
/** Without authentication (local mode): everyone is the local user. */
let open: TestService;
/** With API keys: every API call needs one. */
let guarded: TestService;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  [browser, open, guarded] = await Promise.all([
    launchBrowser(),
    startService(),
    startService({
      edge: { authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [alice.entry] })) },
      apiHeaders: { authorization: `Bearer ${alice.key}` },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await Promise.all([open?.close(), guarded?.close()]);
});

/** Opens the console and closes it after the file. */
async function openOn(service: TestService, options: Parameters<typeof openConsole>[2] = {}): Promise<ConsolePage> {
  const c = await openConsole(browser, service.baseUrl, options);
  opened.push(c);
  return c;
}

describe('console shell', () => {
  it('loads with its navigation, no console error and no CSP violation', async () => {
    const c = await openOn(open);
    const nav = c.page.getByRole('navigation', { name: 'Sections' });
    for (const name of ['Workflows', 'Runs', 'Approvals']) await expect(nav.getByRole('link', { name }).isVisible()).resolves.toBe(true);
    await c.page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
    await expect(c.page.title()).resolves.toMatch(/Switchyard console/);
    expect(c.problems()).toEqual([]);
  });

  it('reaches every section link with Tab, shows where focus is, and follows it with Enter', async () => {
    const c = await openOn(open);
    await c.page.getByRole('heading', { level: 1 }).waitFor();
    const reached = new Map<string, string>();
    // Tab through the top of the page until all three links had focus (bounded: a handful of stops).
    for (let stop = 0; stop < 12 && reached.size < 3; stop++) {
      await c.page.keyboard.press('Tab');
      const focused = await c.page.evaluate(() => {
        const inPage = globalThis as unknown as PageWindow;
        const element = inPage.document.activeElement;
        if (!element || !element.closest('nav')) return null;
        const style = inPage.getComputedStyle(element);
        return { text: element.textContent ?? '', outline: `${style.outlineStyle} ${style.outlineWidth}` };
      });
      if (focused) reached.set(focused.text, focused.outline);
    }
    expect([...reached.keys()].sort()).toEqual(['Approvals', 'Runs', 'Workflows']);
    // A visible focus ring on each: an outline that is drawn and has width.
    for (const [link, outline] of reached) {
      expect(outline, `focus outline of ${link}`).not.toMatch(/^none|\s0px$/);
    }
    // Enter on the focused link (the last one reached) opens its section.
    const runs = c.page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Runs' });
    await runs.focus();
    await c.page.keyboard.press('Enter');
    await c.page.getByRole('heading', { level: 1, name: 'Runs' }).waitFor();
    await expect(runs.getAttribute('aria-current')).resolves.toBe('page');
    expect(c.problems()).toEqual([]);
  });

  it('with authentication on, says sign in is needed until a key is entered, and keeps the key out of the URL', async () => {
    const c = await openOn(guarded);
    const alert = c.page.getByRole('alert').filter({ hasText: 'Sign in needed' });
    await alert.waitFor();
    await c.page.getByLabel('Token or API key').fill(alice.key);
    await c.page.getByRole('button', { name: 'Sign in' }).click();
    await c.page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
    await alert.waitFor({ state: 'detached' });
    await c.page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect(c.page.evaluate((key) => (globalThis as unknown as PageWindow).sessionStorage.getItem(key), TOKEN_KEY)).resolves.toBe(alice.key);
    expect(c.page.url()).not.toContain(alice.key);
    expect(c.page.url()).not.toContain(encodeURIComponent(alice.key));
    // The 401s before signing in are the browser's own log lines for failed loads; nothing else.
    expect(c.pageErrors).toEqual([]);
    expect(c.cspViolations).toEqual([]);
    expect(c.consoleErrors.filter((text) => !/401/.test(text))).toEqual([]);
  });

  it('forgets the key on sign out', async () => {
    const c = await openOn(guarded, { token: alice.key });
    await c.page.getByRole('button', { name: 'Sign out' }).click();
    await c.page.getByLabel('Token or API key').waitFor();
    await expect(c.page.evaluate((key) => (globalThis as unknown as PageWindow).sessionStorage.getItem(key), TOKEN_KEY)).resolves.toBeNull();
  });

  for (const colorScheme of ['light', 'dark'] as const) {
    it(`has no serious or critical accessibility violation (${colorScheme})`, async () => {
      const c = await openOn(open, { colorScheme });
      await c.page.getByRole('heading', { level: 1 }).waitFor();
      await expect(checkAccessibility(c.page)).resolves.toEqual([]);
      // Putting axe on the page did not need the page's CSP loosened.
      expect(c.problems()).toEqual([]);
    });
  }
});
