/**
 * Declared inputs (issue #21 item 3): a workflow's `inputSchema` checks the run input at trigger
 * and dry run (400 naming each path, nothing created), its defaults are applied, and the schema
 * itself is checked when the workflow is saved.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

const INPUT_SCHEMA = {
  type: 'object',
  required: ['customerId', 'customerEmail'],
  properties: {
    customerId: { type: 'string', minLength: 1 },
    customerEmail: { type: 'string', format: 'email' },
    customerType: { enum: ['individual', 'business'], default: 'individual' },
    seats: { type: 'integer', minimum: 1, default: 1 },
  },
};

/** Creates and enables a workflow with INPUT_SCHEMA (or `inputSchema`; null: none); returns its detail. */
async function declaredWorkflow(inputSchema: Record<string, unknown> | null = INPUT_SCHEMA): Promise<any> {
  const created = await svc.createWorkflow({ name: uniqueName('inputs'), canvas: CANVAS, nodes: [echoStep('A')], ...(inputSchema ? { inputSchema } : {}) });
  await svc.enable(created.id);
  return created;
}

const runCount = async (workflowId: string): Promise<number> => (await svc.api.get(wf(`/${workflowId}/runs`))).body.pagination.total;

describe('trigger with declared inputs', () => {
  it('refuses a trigger missing a required field with a 400 naming it, and creates no run', async () => {
    const created = await declaredWorkflow();
    expect(created.inputSchema).toEqual(INPUT_SCHEMA);
    expect((await svc.api.get(wf(`/${created.id}`))).body.inputSchema).toEqual(INPUT_SCHEMA);
    const missing = await svc.trigger(created.id, { initialInput: { customerId: 'c-1' } });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatchObject({ error: 'invalid_request', message: "initialInput does not match the workflow's inputSchema", problems: ['/customerEmail: is required'] });
    const noBody = await svc.trigger(created.id);
    expect(noBody.body.detail.problems.sort()).toEqual(['/customerEmail: is required', '/customerId: is required']);
    expect(await runCount(created.id)).toBe(0);
  });

  it('names every wrong value: type, enum, format', async () => {
    const created = await declaredWorkflow();
    const wrong = await svc.trigger(created.id, { initialInput: { customerId: 'c-1', customerEmail: 'not-an-email', seats: 'three', customerType: 'robot' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail.problems.sort()).toEqual([
      '/customerEmail: must match format "email"',
      '/customerType: must be one of "individual", "business"',
      '/seats: must be integer',
    ]);
    expect(await runCount(created.id)).toBe(0);
  });

  it('applies defaults: the run starts with them in its initialInput', async () => {
    const created = await declaredWorkflow();
    const started = await svc.trigger(created.id, { initialInput: { customerId: 'c-1', customerEmail: 'ada@example.com' } });
    expect(started.status).toBe(202);
    const run = await svc.waitForRun(created.id, started.body.runId);
    expect(run.status).toBe('completed');
    expect(run.initialInput).toEqual({ customerId: 'c-1', customerEmail: 'ada@example.com', customerType: 'individual', seats: 1 });
  });

  it('checks the input in a dry run too, and starts nothing', async () => {
    const created = await declaredWorkflow();
    const dry = await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, initialInput: { customerEmail: 'ada@example.com', seats: 0 } });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ valid: false, dryRun: true });
    expect(dry.body.problems.sort()).toEqual(['/customerId: is required', '/seats: must be >= 1']);
    const fine = await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, initialInput: { customerId: 'c', customerEmail: 'ada@example.com' } });
    expect(fine.body).toMatchObject({ valid: true, problems: [] });
    expect(await runCount(created.id)).toBe(0);
  });

  it('leaves workflows without inputSchema as they were: any input goes', async () => {
    const created = await declaredWorkflow(null);
    expect(created.inputSchema).toBeNull();
    const started = await svc.trigger(created.id, { initialInput: { anything: ['goes'] } });
    expect(started.status).toBe(202);
    expect((await svc.waitForRun(created.id, started.body.runId)).initialInput).toEqual({ anything: ['goes'] });
  });
});

describe('inputSchema on save', () => {
  const create = (inputSchema: unknown) => svc.api.post(wf(), { name: uniqueName('schema'), canvas: CANVAS, nodes: [echoStep('A')], inputSchema });

  it('refuses a schema ajv cannot compile, naming /inputSchema, and saves nothing', async () => {
    const typo = await create({ type: 'object', propertees: {} });
    expect(typo.status).toBe(400);
    expect(typo.body.detail.error).toBe('invalid_request');
    expect(typo.body.detail.problems[0]).toMatch(/^\/inputSchema: .*propertees/);
    const badType = await create({ type: 'strng' });
    expect(badType.status).toBe(400);
    expect(badType.body.detail.problems[0]).toMatch(/^\/inputSchema/);
    expect((await create([1, 2])).status).toBe(400);
  });

  it('refuses an oversized schema (over 16 KiB as JSON)', async () => {
    const big = await create({ type: 'object', description: 'x'.repeat(17_000) });
    expect(big.status).toBe(400);
    expect(big.body.detail.problems).toEqual([expect.stringMatching(/^\/inputSchema: is \d+ bytes as JSON, more than the limit of 16384$/)]);
  });

  it('refuses a remote $ref and $id: nothing is fetched', async () => {
    const remote = await create({ type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } });
    expect(remote.status).toBe(400);
    expect(remote.body.detail.problems).toEqual(['/inputSchema/properties/a/$ref: only local references (#...) are allowed']);
    const withId = await create({ $id: 'https://example.com/s', type: 'object' });
    expect(withId.body.detail.problems).toEqual(['/inputSchema/$id: is not allowed (input schemas are self-contained)']);
  });

  it('checks it in POST /workflows/validate, and on update: a change bumps the version, null removes it', async () => {
    const validated = await svc.api.post(wf('/validate'), { name: uniqueName('v'), canvas: CANVAS, nodes: [echoStep('A')], inputSchema: { type: 'nope' } });
    expect(validated.body.valid).toBe(false);
    expect(validated.body.problems[0]).toMatch(/^\/inputSchema/);
    const created = await declaredWorkflow(null);
    const refused = await svc.api.put(wf(`/${created.id}`), { inputSchema: { type: 'object', required: ['a'], properties: { a: { $ref: 'http://x/y' } } } });
    expect(refused.status).toBe(400);
    const updated = await svc.api.put(wf(`/${created.id}`), { inputSchema: INPUT_SCHEMA });
    expect(updated.body).toMatchObject({ inputSchema: INPUT_SCHEMA, version: created.version + 1 });
    expect((await svc.trigger(created.id, {})).status).toBe(400);
    const removed = await svc.api.put(wf(`/${created.id}`), { inputSchema: null });
    expect(removed.body).toMatchObject({ inputSchema: null, version: created.version + 2 });
    expect((await svc.trigger(created.id, {})).status).toBe(202);
  });

  it('keeps keys of the schema as written through the store ($defs, camelCase property names)', async () => {
    const schema = { type: 'object', $defs: { email: { type: 'string', format: 'email' } }, properties: { customerEmail: { $ref: '#/$defs/email' } }, required: ['customerEmail'] };
    const created = await declaredWorkflow(schema);
    expect((await svc.api.get(wf(`/${created.id}`))).body.inputSchema).toEqual(schema);
    expect((await svc.trigger(created.id, { initialInput: { customerEmail: 'x' } })).body.detail.problems).toEqual(['/customerEmail: must match format "email"']);
  });
});

describe('examples/workflows/customer-onboarding.json', () => {
  it("declares the README walkthrough's input: that input starts a run, one without customerEmail is refused", async () => {
    const example = JSON.parse(readFileSync(new URL('../examples/workflows/customer-onboarding.json', import.meta.url), 'utf8'));
    const created = await svc.createWorkflow({ ...example, name: uniqueName('onboarding') });
    await svc.enable(created.id);
    const readmeInput = { customerId: 'c-42', customerName: 'Ada Lovelace', customerEmail: 'ada@example.com', customerType: 'enterprise', seats: 12 };
    expect((await svc.api.post(wf(`/${created.id}/runs`), { dryRun: true, initialInput: readmeInput })).body).toMatchObject({ valid: true, problems: [] });
    const { customerEmail: _email, ...withoutEmail } = readmeInput;
    const refused = await svc.trigger(created.id, { initialInput: { ...withoutEmail, customerType: 'gold' } });
    expect(refused.body.detail.problems.sort()).toEqual(['/customerEmail: is required', '/customerType: must be one of "enterprise", "standard"']);
    expect(await runCount(created.id)).toBe(0);
  });
});
