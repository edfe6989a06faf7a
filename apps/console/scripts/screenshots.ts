/**
 * Screenshots of the console (issue #19; docs/guide/console.md "Screenshots"): starts the service
 * in this process (the end-to-end tests' `startService`: embedded store in memory, the example
 * executors, no authentication), makes a small demo — a workflow "Expense approval" with a form
 * and a confirmation gate, one run parked at the confirmation, one completed — and writes PNGs of
 * the pages Workflows, Workflow graph (with the parked run), Run (the parked run) and Approvals,
 * light and dark, wide (1280×800) and narrow (400×800), with the same headless Chromium as the
 * browser tests (`SWITCHYARD_CHROMIUM`, default /usr/bin/chromium).
 *
 *   npm run console:screenshots                 writes docs/console/<page>-<scheme>-<width>.png
 *   npm run console:screenshots -- --out DIR    writes them to DIR
 *
 * The console must be built (`npm run console:build`): the service serves apps/console/dist/.
 * Each page is taken once its level-1 heading shows and nothing on it is `aria-busy="true"`.
 */
import { mkdir } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, openConsole } from '../../../test/support/browser.ts';
import { CANVAS, echoStep, startService, type TestService } from '../../../test/support/service.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The window sizes, CSS pixels. */
export const SIZES = { wide: { width: 1280, height: 800 }, narrow: { width: 400, height: 800 } } as const;

/** The colour schemes. */
export const SCHEMES = ['light', 'dark'] as const;

/** The pages: file name stem -> route (after `#`) in the demo. */
export type Shots = Record<string, string>;

/**
 * Makes the demo on `svc`: the workflow, a run parked at its confirmation gate (its form filled
 * in) and a completed run. Returns the pages to take. Throws when a run does not get where it should.
 */
export async function makeDemo(svc: TestService): Promise<Shots> {
  const created = await svc.createWorkflow({
    name: 'Expense approval',
    description: 'A claim is filled in, a manager approves it, then it is paid.',
    canvas: CANVAS,
    nodes: [
      { ...echoStep('Receive claim', { claim: { $cel: 'input.claim' } }), id: 'receive' },
      {
        ...echoStep('Details', { amount: { $cel: 'user_input.amount' }, reason: { $cel: 'user_input.reason' } }),
        id: 'details',
        humanReview: {
          requiresUserInput: true,
          userInputSchema: [
            { name: 'amount', fieldType: 'number', required: true },
            { name: 'reason', fieldType: 'string', required: true },
          ],
        },
      },
      { ...echoStep('Manager approval', { decision: 'approved' }), id: 'approve', humanReview: { requiresConfirmation: true } },
      { ...echoStep('Pay', { paid: true }), id: 'pay' },
    ],
  });
  const workflowId = created.id as string;
  await svc.enable(workflowId);

  /** Triggers a run and fills its form in; returns the run id, parked at the confirmation. */
  const parkedRun = async (claim: string, amount: number): Promise<string> => {
    const triggered = await svc.trigger(workflowId, { initialInput: { claim } });
    if (triggered.status !== 202) throw new Error(`trigger failed: ${triggered.status} ${triggered.text}`);
    const runId = triggered.body.runId as string;
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending.some((p: any) => p.stepId === 'details') });
    const filled = await svc.approve(workflowId, runId, { stepId: 'details', resolution: 'user_input', userInput: { amount, reason: claim } });
    if (filled.status !== 200) throw new Error(`form failed: ${filled.status} ${filled.text}`);
    await svc.waitForGate(workflowId, runId, { until: (pending) => pending.some((p: any) => p.stepId === 'approve') });
    return runId;
  };

  const done = await parkedRun('Train to Lyon', 84);
  const confirmed = await svc.approve(workflowId, done, { stepId: 'approve', resolution: 'confirm' });
  if (confirmed.status !== 200) throw new Error(`confirm failed: ${confirmed.status} ${confirmed.text}`);
  const completed = await svc.waitForRun(workflowId, done);
  if (completed.status !== 'completed') throw new Error(`demo run ended ${completed.status}`);
  const parked = await parkedRun('Conference ticket', 450);

  return {
    workflows: '/workflows',
    'workflow-graph': `/workflows/${encodeURIComponent(workflowId)}?run=${encodeURIComponent(parked)}`,
    run: `/runs/${encodeURIComponent(parked)}`,
    approvals: '/inbox',
  };
}

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf('--out');
  const out = resolve(ROOT, outIndex > 0 && process.argv[outIndex + 1] ? process.argv[outIndex + 1]! : 'docs/console');
  await mkdir(out, { recursive: true });
  const [browser, svc] = await Promise.all([launchBrowser(), startService()]);
  try {
    const shots = await makeDemo(svc);
    for (const [name, hash] of Object.entries(shots)) {
      for (const colorScheme of SCHEMES) {
        for (const [width, viewport] of Object.entries(SIZES)) {
          const c = await openConsole(browser, svc.baseUrl, { colorScheme, viewport, hash });
          try {
            await c.page.getByRole('heading', { level: 1 }).first().waitFor();
            await c.page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
            await c.page.evaluate(() => (globalThis as unknown as { document: { fonts: { ready: Promise<unknown> } } }).document.fonts.ready);
            const file = `${out}/${name}-${colorScheme}-${width}.png`;
            await c.page.screenshot({ path: file, fullPage: true });
            const problems = c.problems();
            console.log(`${relative(process.cwd(), file)}${problems.length > 0 ? `  (page problems: ${problems.join('; ')})` : ''}`);
          } finally {
            await c.close();
          }
        }
      }
    }
  } finally {
    await browser.close();
    await svc.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
