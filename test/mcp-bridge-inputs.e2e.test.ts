/**
 * Declared inputs on the MCP bridge (issue #21 item 3): get_workflow shows `inputSchema`; the
 * semantic and the orchestrator run_workflow check the input against it before calling the API
 * (INVALID_INPUT naming each field, the schema in the details), so that no trigger is sent at all
 * (the API's request counter for the trigger route does not move) and no run exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeInProcess, type BridgeClient } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { sample } from './support/prometheus.ts';
import { CANVAS, echoStep, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
let bridge: BridgeClient;
let orchestrator: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]));
// The orchestrator surface on the same API (hooks run in order: the service is up by then).
beforeAll(async () => {
  orchestrator = await bridgeInProcess(svc.baseUrl, ['--surface', 'orchestrator']);
});
afterAll(async () => {
  await orchestrator?.close();
});

const INPUT_SCHEMA = {
  type: 'object',
  required: ['customerEmail'],
  properties: { customerEmail: { type: 'string', format: 'email' }, seats: { type: 'integer', default: 1 } },
};

/** Trigger requests the API has answered, any status (dry runs included). */
async function triggersAnswered(): Promise<number> {
  const text = (await svc.api.get('/metrics')).text;
  let total = 0;
  for (const status of ['200', '202', '400', '404', '409']) {
    total += sample(text, 'switchyard_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/workflows/:workflow_id/runs', status_code: status }) ?? 0;
  }
  return total;
}

async function declaredWorkflow(): Promise<any> {
  const created = await svc.createWorkflow({ name: uniqueName('bridge-inputs'), canvas: CANVAS, nodes: [echoStep('A')], inputSchema: INPUT_SCHEMA });
  await svc.enable(created.id);
  return created;
}

const runCount = async (workflowId: string): Promise<number> => (await svc.api.get(wf(`/${workflowId}/runs`))).body.pagination.total;

describe('bridge: declared inputs', () => {
  it('get_workflow returns the inputSchema', async () => {
    const created = await declaredWorkflow();
    const got = await bridge.call('get_workflow', { workflowId: created.id });
    expect(got.data.workflow.inputSchema).toEqual(INPUT_SCHEMA);
  });

  it('semantic run_workflow refuses a mismatching input with INVALID_INPUT before calling the API', async () => {
    const created = await declaredWorkflow();
    const before = await triggersAnswered();
    const refused = await bridge.call('run_workflow', { workflowId: created.id, input: { seats: 'two' } });
    expect(refused).toMatchObject({ ok: false, isError: true });
    expect(refused.error).toMatchObject({
      code: 'INVALID_INPUT',
      details: { fields: expect.arrayContaining(['input.customerEmail', 'input.seats']), inputSchema: INPUT_SCHEMA },
    });
    expect(refused.error?.message).toMatch(/^input does not match the workflow's inputSchema: .*\/customerEmail: is required/);
    const dry = await bridge.call('run_workflow', { workflowId: created.id, input: {}, dryRun: true });
    expect(dry.data).toMatchObject({ dryRun: true, valid: false, problems: ['/customerEmail: is required'] });
    expect(await triggersAnswered()).toBe(before);
    expect(await runCount(created.id)).toBe(0);
    const started = await bridge.call('run_workflow', { workflowId: created.id, input: { customerEmail: 'ada@example.com' }, waitForTerminal: true });
    expect(started.data.run.status).toBe('completed');
    expect((await svc.api.get(wf(`/${created.id}/runs/${started.data.runId}`))).body.initialInput).toEqual({ customerEmail: 'ada@example.com', seats: 1 });
  });

  it('orchestrator run_workflow refuses mismatching parameters with INVALID_INPUT naming the field, before calling the API', async () => {
    const created = await declaredWorkflow();
    const before = await triggersAnswered();
    const refused = await orchestrator.call('run_workflow', { workflow_name: created.name, parameters: { customerEmail: 'not an email' } });
    expect(refused.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['parameters.customerEmail'], problems: ['/customerEmail: must match format "email"'] } });
    const dry = await orchestrator.call('run_workflow', { workflow_name: created.name, dry_run: true });
    expect(dry.data).toMatchObject({ status: 'failed', workflow_id: null, error_message: 'The run could not start: /customerEmail: is required' });
    expect(await triggersAnswered()).toBe(before);
    expect(await runCount(created.id)).toBe(0);
    const ran = await orchestrator.call('run_workflow', { workflow_name: created.name, parameters: { customerEmail: 'ada@example.com' }, timeout: 30 });
    expect(ran.data.status).toBe('success');
    expect(await triggersAnswered()).toBe(before + 1); // the counter does count triggers sent
  });
});
