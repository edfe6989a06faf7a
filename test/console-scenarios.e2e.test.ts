/**
 * The console as people use it (issue #19 "Done when"), in headless Chromium against the real API:
 * trigger a run from the console, watch its nodes change live, decide a confirmation and a form
 * from the inbox, see the run complete without a reload; cancel a running run with a reason; lose a
 * race for a gate and see who won; with authentication on, a viewer gets no decision buttons and a
 * non-approver's "mine" inbox does not list the gate; axe finds no serious problem on any page; and
 * markup in names, outputs and prompts shows as text and runs nothing. Things are found by their
 * visible text and roles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ApiKeyVerifier, Authenticator, newApiKey } from '@switchyard/api';
import { checkAccessibility, launchBrowser, openConsole, type ConsolePage, type PageWindow } from './support/browser.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let browser: Browser;
let svc: TestService;
const opened: ConsolePage[] = [];

beforeAll(async () => {
  [browser, svc] = await Promise.all([launchBrowser(), startService()]);
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await svc?.close();
});

/** Opens the console on `service` (closed after the file). */
async function open(service: TestService, options: Parameters<typeof openConsole>[2] = {}): Promise<ConsolePage> {
  const c = await openConsole(browser, service.baseUrl, options);
  opened.push(c);
  return c;
}

/** A workflow of a wait (`waitMs`), a confirmation gate, a form gate and a last step; created and enabled through the API. */
async function gatedWorkflow(name: string, waitMs = 1_500): Promise<string> {
  const created = await svc.createWorkflow({
    name,
    canvas: CANVAS,
    nodes: [
      { name: 'Wait', nodeType: 'step', executorKey: 'sleep', config: { ms: waitMs } },
      echoStep('Approve', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Ship the order?' } }),
      echoStep('Details', { amount: { $cel: 'user_input.amount' } }, {
        humanReview: {
          requiresUserInput: true,
          userInputMessage: 'How much?',
          userInputSchema: [
            { name: 'amount', fieldType: 'number', required: true },
            { name: 'note', fieldType: 'string', required: false },
          ],
        },
      }),
      echoStep('Done'),
    ],
  });
  await svc.enable(created.id);
  return created.id as string;
}

/** The run id in the page's URL (`#/runs/<id>`), once the console navigated there. */
async function runIdOf(page: Page): Promise<string> {
  await page.waitForURL(/#\/runs\/[0-9a-f]{24}/);
  return /#\/runs\/([0-9a-f]{24})/.exec(page.url())![1]!;
}

/** Waits until the graph node `name` says `status` (its accessible name: "<name>, <kind>, <status>"). */
async function nodeSays(page: Page, name: string, status: string): Promise<void> {
  await page.getByRole('button', { name: new RegExp(`^${name}, [^,]+, ${status}`) }).waitFor({ timeout: 15_000 });
}

describe('a run from trigger to completion, live', () => {
  it('is triggered from the console, turns from running to awaiting approval on the graph, is decided from the inbox (confirm, then a form) and completes without a reload', async () => {
    const name = uniqueName('console order');
    // Long enough to see the wait running on the graph opened after the trigger, even on a loaded machine.
    const workflowId = await gatedWorkflow(name, 6_000);

    const c = await open(svc);
    await c.page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
    await c.page.getByRole('button', { name: `Run ${name}` }).click();
    const input = c.page.getByLabel(`Initial input of ${name} (JSON object)`);
    await input.fill('{"customer": "c-1"');
    await expect(c.page.getByRole('button', { name: 'Start run' }).isDisabled()).resolves.toBe(true);
    await input.fill('{"customer": "c-1"}');
    await c.page.getByRole('button', { name: 'Start run' }).click();
    const runId = await runIdOf(c.page);

    // The graph of the run: the wait runs, then the gate waits for a person — live, no reload.
    const graph = await open(svc, { hash: `/workflows/${workflowId}?run=${runId}` });
    await nodeSays(graph.page, 'Wait', 'running');
    await nodeSays(graph.page, 'Approve', 'awaiting approval');

    // The run page stays open while the gates are decided elsewhere.
    const runPage = c.page;
    await runPage.getByRole('heading', { level: 1, name: `Run ${runId}` }).waitFor();

    const inbox = await open(svc, { hash: '/inbox' });
    const approve = inbox.page.getByRole('article', { name: /^Approve/ });
    await approve.getByText('Ship the order?').waitFor();
    await approve.getByRole('button', { name: 'Confirm', exact: true }).click();

    const details = inbox.page.getByRole('article', { name: /^Details/ });
    await details.getByText('How much?').waitFor({ timeout: 15_000 });
    await details.getByRole('button', { name: 'Submit' }).click();
    await details.getByText(/amount/).first().waitFor();
    await details.getByLabel(/^amount/).fill('42.5');
    await details.getByRole('button', { name: 'Submit' }).click();

    await runPage.getByText('completed', { exact: true }).first().waitFor({ timeout: 15_000 });
    await nodeSays(graph.page, 'Done', 'completed');
    const run = (await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body;
    expect(run.status).toBe('completed');
    expect(run.initialInput).toEqual({ customer: 'c-1' });
    expect(run.requirements.map((r: any) => r.resolution)).toEqual(['confirm', 'user_input']);
    expect(run.finalOutput.input.arguments.amount).toBe(42.5);
    for (const page of [c, graph, inbox]) expect(page.problems()).toEqual([]);
  });

  it('cancels a running run with a reason from its page', async () => {
    const { workflowId, runId } = await svc.startRun({ name: uniqueName('console cancel'), canvas: CANVAS, nodes: [{ name: 'Long', nodeType: 'step', executorKey: 'sleep', config: { ms: 60_000 } }] });
    await svc.waitForRun(workflowId, runId, { until: ['running'] });
    const c = await open(svc, { hash: `/runs/${runId}` });
    await c.page.getByRole('button', { name: 'Cancel run…' }).click();
    await c.page.getByLabel('Reason').fill('wrong customer');
    await c.page.getByRole('button', { name: 'Cancel run', exact: true }).click();
    await c.page.getByText('cancelled', { exact: true }).first().waitFor();
    await c.page.getByText('wrong customer').first().waitFor();
    const run = (await svc.api.get(wf(`/${workflowId}/runs/${runId}`))).body;
    expect(run).toMatchObject({ status: 'cancelled', cancelReason: 'wrong customer' });
  });

  it('a second browser that loses the race for a gate is told who decided it and how', async () => {
    const name = uniqueName('console race');
    const workflowId = await gatedWorkflow(name);
    const runId = (await svc.trigger(workflowId, {})).body.runId as string;
    await svc.waitForGate(workflowId, runId);

    const first = await open(svc, { hash: '/inbox' });
    const second = await open(svc, { hash: '/inbox' });
    // The second browser does not hear of the first's decision before it clicks (its live refresh is cut).
    await second.context.route('**/events/stream', (route) => route.abort());
    const card = (page: Page) => page.getByRole('article', { name: /^Approve/ }).filter({ hasText: name });
    await card(second.page).getByText('Ship the order?').waitFor();
    await card(first.page).getByRole('button', { name: 'Confirm', exact: true }).click();
    await svc.waitForGate(workflowId, runId, { until: (pending: any[]) => pending.some((gate) => gate.stepName === 'Details') });

    await card(second.page).getByRole('button', { name: 'Confirm', exact: true }).click();
    const told = second.page.getByText(/Already decided/);
    await told.waitFor();
    await expect(second.page.getByText(/decided by anonymous \(confirm\)/).isVisible()).resolves.toBe(true);
  });
});

describe('when the service ends event streams', () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startService({ env: { SWITCHYARD_SSE_MAX_LIFETIME_MS: '1000' } });
  });
  afterAll(() => short?.close());

  it('the run page reconnects after its stream\'s lifetime is over and still updates live', async () => {
    const { workflowId, runId } = await short.startRun({
      name: uniqueName('console lifetime'),
      canvas: CANVAS,
      nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true } }), echoStep('After')],
    });
    const gate = await short.waitForGate(workflowId, runId);
    const c = await open(short, { hash: `/runs/${runId}` });
    await c.page.getByText('awaiting approval', { exact: true }).first().waitFor();
    // Past two lifetimes of the stream: it was ended and opened again at least once.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const decided = await short.approve(workflowId, runId, { stepId: gate.pendingRequirements[0].stepId, resolution: 'confirm' });
    expect(decided.status).toBe(200);
    await c.page.getByText('completed', { exact: true }).first().waitFor({ timeout: 15_000 });
  });
});

describe('with authentication on', () => {
  const SCOPES = ['workflows-read', 'workflows-write', 'workflows-control'];
  const alice = newApiKey('alice', SCOPES, { subject: 'alice' });
  const vera = newApiKey('vera', SCOPES, { subject: 'vera' });
  const oscar = newApiKey('oscar', SCOPES, { subject: 'oscar' });
  let guarded: TestService;
  let workflowName: string;

  beforeAll(async () => {
    guarded = await startService({
      edge: { authenticator: Authenticator.withKeys(new ApiKeyVerifier({ keys: [alice.entry, vera.entry, oscar.entry] })) },
      apiHeaders: { authorization: `Bearer ${alice.key}` },
    });
    workflowName = uniqueName('console finance');
    const created = await guarded.createWorkflow({
      name: workflowName,
      canvas: CANVAS,
      nodes: [echoStep('Pay', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: 'Pay 500 EUR?', approvers: ['user:carol'] } })],
    });
    await guarded.enable(created.id);
    await guarded.share(created.id, { operators: ['user:oscar'], viewers: ['user:vera'] });
    const runId = (await guarded.trigger(created.id, {})).body.runId as string;
    await guarded.waitForGate(created.id, runId);
  });
  afterAll(() => guarded?.close());

  it('a viewer sees the gate with no decision button, and a non-approver\'s "mine" inbox does not list it', async () => {
    const viewer = await open(guarded, { token: vera.key, hash: '/inbox?all=1' });
    const card = viewer.page.getByRole('article', { name: /^Pay/ });
    await card.getByText('Pay 500 EUR?').waitFor();
    await card.getByText('Only user:carol may decide this.').waitFor();
    await expect(card.getByRole('button', { name: 'Confirm', exact: true }).count()).resolves.toBe(0);

    const operator = await open(guarded, { token: oscar.key, hash: '/inbox' });
    await operator.page.getByText('Nothing waits for you.').waitFor();
    await expect(operator.page.getByText('Pay 500 EUR?').count()).resolves.toBe(0);
  });
});

describe('accessibility and untrusted content', () => {
  it('axe finds no serious or critical violation on any page, light or dark', { timeout: 90_000 }, async () => {
    const name = uniqueName('console axe');
    const workflowId = await gatedWorkflow(name);
    const runId = (await svc.trigger(workflowId, {})).body.runId as string;
    await svc.waitForGate(workflowId, runId);
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const [hash, ready] of [
        ['/workflows', 'Workflows'],
        [`/workflows/${workflowId}?run=${runId}`, name],
        ['/runs', 'Runs'],
        [`/runs/${runId}`, `Run ${runId}`],
        ['/inbox', 'Approvals'],
      ] as const) {
        const c = await open(svc, { hash, colorScheme });
        await c.page.getByRole('heading', { level: 1, name: ready }).waitFor();
        // Pages with a live stream never go network-idle: wait until nothing says it is loading.
        await c.page.getByText(/^Loading/).first().waitFor({ state: 'detached' }).catch(() => undefined);
        expect(await checkAccessibility(c.page), `${hash} (${colorScheme})`).toEqual([]);
        await c.close();
      }
    }
  });

  it('every page fits a 400-pixel-wide window: nothing scrolls sideways', { timeout: 60_000 }, async () => {
    const name = uniqueName('console narrow');
    const workflowId = await gatedWorkflow(name);
    const runId = (await svc.trigger(workflowId, {})).body.runId as string;
    await svc.waitForGate(workflowId, runId);
    for (const hash of ['/workflows', `/workflows/${workflowId}?run=${runId}`, '/runs', `/runs/${runId}`, '/inbox']) {
      const c = await open(svc, { hash, viewport: { width: 400, height: 800 } });
      await c.page.getByRole('heading', { level: 1 }).waitFor();
      await c.page.getByText(/^Loading/).first().waitFor({ state: 'detached' }).catch(() => undefined);
      const width = await c.page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
      expect(width, hash).toBeLessThanOrEqual(400);
      await c.close();
    }
  });

  it('shows markup in a workflow name, an output and a gate prompt as text, and runs none of it', async () => {
    const evil = `<img src=x onerror="window.__pwned='img'"><script>window.__pwned='script'</script>`;
    const name = uniqueName(`xss ${evil}`);
    const created = await svc.createWorkflow({
      name,
      canvas: CANVAS,
      nodes: [
        echoStep('Echo', { html: evil }),
        echoStep('Gate', {}, { humanReview: { requiresConfirmation: true, confirmationMessage: `Approve ${evil}?` } }),
      ],
    });
    await svc.enable(created.id);
    const runId = (await svc.trigger(created.id, {})).body.runId as string;
    await svc.waitForGate(created.id, runId);
    for (const hash of ['/workflows', `/workflows/${created.id}?run=${runId}`, `/runs/${runId}`, '/inbox']) {
      const c = await open(svc, { hash });
      await c.page.getByRole('heading', { level: 1 }).waitFor();
      await c.page.getByText(evil, { exact: false }).first().waitFor();
      if (hash.startsWith('/runs/')) await c.page.getByText(/onerror/).first().waitFor();
      expect(await c.page.evaluate(() => (globalThis as unknown as PageWindow & { __pwned?: string }).__pwned)).toBeUndefined();
      await expect(c.page.locator('main img, main script').count()).resolves.toBe(0);
      expect(c.problems(), hash).toEqual([]);
      await c.close();
    }
  });
});
