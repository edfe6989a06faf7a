/**
 * Browser test support for the console (issue #19; docs/guide/console.md): a headless Chromium
 * driven by playwright-core, the console opened in a fresh browser context per test, with what
 * went wrong on the page (console errors, uncaught exceptions, Content-Security-Policy violations)
 * recorded, and an accessibility check with axe-core.
 *
 * Chromium: the binary at `SWITCHYARD_CHROMIUM`, default Debian's `/usr/bin/chromium` (CI installs
 * it, see .ci/run). When it is missing, {@link launchBrowser} throws with a message saying how to
 * get it: the browser tests fail rather than skip.
 */
import { access, constants } from 'node:fs/promises';
import axe from 'axe-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * The browser globals that functions run in the page (`page.evaluate`, init scripts) use, typed
 * loosely: the root tsconfig has no DOM library (tests run in Node). Inside such a function write
 * `(globalThis as unknown as PageWindow)`; the cast is erased, so the page sees its own globalThis.
 */
export interface PageWindow {
  document: any;
  sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  getComputedStyle(element: any): { outlineStyle: string; outlineWidth: string };
  axe?: any;
  __switchyardCspViolation?(report: string): void;
}

/** The Chromium binary the tests drive. */
export const CHROMIUM = process.env['SWITCHYARD_CHROMIUM'] ?? '/usr/bin/chromium';

/** The flags of a quiet headless Chromium: no sandbox (containers), no GPU, no background traffic. */
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long Chromium may take to start, ms. */
const LAUNCH_TIMEOUT_MS = 30_000;

/** How long a wait on the page (a locator, a navigation) may take, ms. */
const WAIT_TIMEOUT_MS = 10_000;

/** The sessionStorage key of the console's credential (apps/console/src/api.ts). */
export const TOKEN_KEY = 'switchyard.console.token';

/**
 * Starts headless Chromium ({@link CHROMIUM}). Throws an Error naming the binary and how to
 * install it when it is not there, and Playwright's error when it does not start within 30 s.
 * Close it with `browser.close()` in afterAll.
 */
export async function launchBrowser(): Promise<Browser> {
  try {
    await access(CHROMIUM, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: the console's browser tests need it. ` +
        'Install it (Debian/Ubuntu: apt-get install -y --no-install-recommends chromium; .ci/run does this) ' +
        'or point SWITCHYARD_CHROMIUM at a Chromium or Chrome binary.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: LAUNCH_TIMEOUT_MS });
}

/** How to open the console. */
export interface OpenOptions {
  /** A token or API key put in sessionStorage before the page loads, as if the person had signed in. */
  token?: string;
  /** The `prefers-color-scheme` the page sees (default light). */
  colorScheme?: 'light' | 'dark';
  /** Size of the window, CSS pixels (default 1280×800). */
  viewport?: { width: number; height: number };
  /** The route after `#`, e.g. `/runs` (default none: the console's start page). */
  hash?: string;
}

/** The console open in its own browser context, and what went wrong on it so far. */
export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Messages the page logged at level error (including the browser's own, e.g. failed loads). */
  consoleErrors: string[];
  /** Uncaught exceptions of the page's scripts. */
  pageErrors: string[];
  /** Content-Security-Policy violations (`securitypolicyviolation` events): directive and blocked URI. */
  cspViolations: string[];
  /** Everything of the three above, for one assertion (`expect(c.problems()).toEqual([])`). */
  problems(): string[];
  /** Closes the context (and its page). */
  close(): Promise<void>;
}

/**
 * Opens `<baseUrl>/console/` (plus `#<hash>`) in a fresh context of `browser` and waits for the
 * load event. The context has the page's real CSP (no bypass). With `token`, sessionStorage holds
 * it before any script of the page runs (an init script). CSP violations are caught by a listener
 * the init script adds, so they are recorded even when the browser logs nothing.
 */
export async function openConsole(browser: Browser, baseUrl: string, options: OpenOptions = {}): Promise<ConsolePage> {
  const context = await browser.newContext({
    colorScheme: options.colorScheme ?? 'light',
    viewport: options.viewport ?? { width: 1280, height: 800 },
  });
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  await context.exposeBinding('__switchyardCspViolation', (_source, report: string) => void cspViolations.push(report));
  await context.addInitScript(
    ({ key, token }) => {
      const page = globalThis as unknown as PageWindow;
      if (token !== undefined) page.sessionStorage.setItem(key, token);
      page.document.addEventListener('securitypolicyviolation', (event: { effectiveDirective: string; blockedURI: string }) => {
        page.__switchyardCspViolation?.(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`);
      });
    },
    { key: TOKEN_KEY, token: options.token },
  );
  const page = await context.newPage();
  // Waits of a test (locators, navigation) fail after 10 s with what they waited for, well within
  // the test's own timeout.
  page.setDefaultTimeout(WAIT_TIMEOUT_MS);
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const { url } = message.location();
    // The browser asks for /favicon.ico by itself; the console has none, and nobody sees that 404.
    if (url !== undefined && new URL(url, baseUrl).pathname === '/favicon.ico') return;
    consoleErrors.push(url ? `${message.text()} (${url})` : message.text());
  });
  page.on('pageerror', (error) => void pageErrors.push(error.message));
  await page.goto(`${baseUrl}/console/${options.hash === undefined ? '' : `#${options.hash}`}`, { waitUntil: 'load' });
  return {
    page,
    context,
    consoleErrors,
    pageErrors,
    cspViolations,
    problems: () => [
      ...consoleErrors.map((text) => `console error: ${text}`),
      ...pageErrors.map((text) => `page error: ${text}`),
      ...cspViolations.map((text) => `CSP violation: ${text}`),
    ],
    close: () => context.close(),
  };
}

/** One axe-core violation, as much of it as a failing assertion needs to be read. */
export interface AccessibilityViolation {
  id: string;
  impact: string;
  help: string;
  /** CSS selectors of the offending elements. */
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules plus best practices) on the page as it is now and
 * returns the violations of impact serious or critical (empty when there are none).
 *
 * How axe gets in despite the console's CSP (`script-src 'self'`, no eval): the source is
 * evaluated through the DevTools protocol (`page.evaluate` with a string), which the page's CSP
 * does not govern, unlike a `<script>` tag (`page.addScriptTag`) or the page's own `eval`. So the
 * page under test keeps its real CSP; nothing is bypassed, and a CSP violation still shows in
 * {@link ConsolePage.cspViolations}.
 */
export async function checkAccessibility(page: Page): Promise<AccessibilityViolation[]> {
  const loaded = await page.evaluate(() => typeof (globalThis as unknown as PageWindow).axe === 'object');
  if (!loaded) await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const inPage = globalThis as unknown as PageWindow;
    const result = await inPage.axe.run(inPage.document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((violation: any) => ({
      id: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      targets: violation.nodes.map((node: any) => String(node.target.join(' '))),
    }));
  });
  return (violations as AccessibilityViolation[]).filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
