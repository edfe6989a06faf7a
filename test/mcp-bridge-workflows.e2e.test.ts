/**
 * The MCP bridge's workflow tools (issue #8) through a real SDK client against the real API: the
 * semantic create/validate/toggle/delete_workflow, and the orchestrator surface
 * (orchestrator-mcp-tools.md: run_workflow, list_workflows, create_workflow, cancel_workflow) with
 * its "partial" rule. Every result is validated against the tool's listed outputSchema by `call`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYamlDefinition } from '@switchyard/domain/yaml-definition';
import { errorMessageOf, outcomeOf } from '../apps/mcp-bridge/src/tools/orchestrator/outcome.ts';
import { bridgeInProcess, type BridgeClient } from './support/bridge.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
let bridge: BridgeClient;
let orchestrator: BridgeClient;
beforeAll(async () => {
  svc = await startService();
  bridge = await bridgeInProcess(svc.baseUrl);
  orchestrator = await bridgeInProcess(svc.baseUrl, ['--surface', 'orchestrator']);
});
afterAll(async () => {
  await orchestrator?.close();
  await bridge?.close();
  await svc?.close();
});

const UNKNOWN_ID = '0123456789abcdef01234567';

/** The MCP hints each kind must give (issue #8). */
const HINTS = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  irreversible: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  launch: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
} as const;

const gated = (name: string) => echoStep(name, {}, { humanReview: { requiresConfirmation: true } });

/** A two-step echo definition (the REST create body). */
function echoDefinition(name: string, extra: Record<string, unknown> = {}) {
  return { name, nodes: [echoStep('A', { greeting: 'hi' }), echoStep('B')], ...extra };
}

/** The id at the end of a workflow_path. */
const idOfPath = (path: string) => path.split('/').at(-1)!;

/** The run of `workflowId` (the only one), once it exists. */
async function onlyRunOf(workflowId: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const runs = await svc.api.get(`/api/v1/runs?workflowId=${workflowId}`);
    if (runs.body.runs?.length > 0) return runs.body.runs[0].id;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no run of ${workflowId}`);
}

describe('annotations from tools/list', () => {
  it('semantic workflow tools: validate reads; create and toggle write; delete is irreversible', async () => {
    const tools = await bridge.tools();
    const kinds = { create_workflow: 'write', validate_workflow: 'read', toggle_workflow: 'write', delete_workflow: 'irreversible' } as const;
    for (const [name, kind] of Object.entries(kinds)) {
      expect(tools.get(name)?.annotations, name).toMatchObject({ ...HINTS[kind], title: tools.get(name).title });
    }
    expect(Object.keys(tools.get('create_workflow').inputSchema.properties)).toEqual(['definition', 'yaml', 'overwrite', 'enable']);
    expect(tools.get('delete_workflow').inputSchema.properties.confirm).toMatchObject({ const: true });
  });

  it('orchestrator surface: exactly the spec names, parameters and output fields', async () => {
    const tools = await orchestrator.tools();
    expect([...tools.keys()]).toEqual(['run_workflow', 'list_workflows', 'create_workflow', 'cancel_workflow']);
    const kinds = { run_workflow: 'launch', list_workflows: 'read', create_workflow: 'write', cancel_workflow: 'irreversible' } as const;
    for (const [name, kind] of Object.entries(kinds)) expect(tools.get(name).annotations, name).toMatchObject(HINTS[kind]);
    const params = (name: string) => Object.keys(tools.get(name).inputSchema.properties);
    const data = (name: string) => Object.keys(tools.get(name).outputSchema.properties.data.properties);
    expect(params('run_workflow')).toEqual(['workflow_name', 'parameters', 'dry_run', 'timeout', 'parallel_limit']);
    expect(tools.get('run_workflow').inputSchema.required).toEqual(['workflow_name']);
    expect(data('run_workflow')).toEqual(['status', 'workflow_id', 'steps_completed', 'steps_total', 'step_results', 'execution_time', 'error_message']);
    expect(Object.keys(tools.get('run_workflow').outputSchema.properties.data.properties.step_results.items.properties)).toEqual(['step_name', 'status', 'output', 'duration']);
    expect(params('list_workflows')).toEqual(['category', 'include_running']);
    expect(data('list_workflows')).toEqual(['workflows', 'running_count']);
    expect(params('create_workflow')).toEqual(['name', 'definition', 'yaml', 'overwrite']);
    expect(data('create_workflow')).toEqual(['status', 'workflow_path']);
    expect(params('cancel_workflow')).toEqual(['workflow_id', 'reason']);
    expect(data('cancel_workflow')).toEqual(['status', 'steps_completed', 'message']);
  });
});

describe('semantic create_workflow', () => {
  it('creates (canvas defaulted, disabled unless enable), then overwrites by name', async () => {
    const name = uniqueName('wf-create');
    const created = await bridge.call('create_workflow', { definition: echoDefinition(name, { tags: ['build'] }) });
    expect(created).toMatchObject({ ok: true, data: { name, version: 1, enabled: false, tags: ['build'], status: 'created' } });
    const stored = await svc.api.get(wf(`/${created.data.workflowId}`));
    expect(stored.body).toMatchObject({ canvas: CANVAS, nodes: [{ name: 'A' }, { name: 'B' }] });

    const again = await bridge.call('create_workflow', { definition: echoDefinition(name) });
    expect(again).toMatchObject({ ok: false, isError: true, error: { code: 'CONFLICT' } });
    expect(again.error!.message).toMatch(/already exists.*overwrite: true/);

    const updated = await bridge.call('create_workflow', { definition: { name, description: 'one step', nodes: [echoStep('only')] }, overwrite: true, enable: true });
    expect(updated.data).toMatchObject({ workflowId: created.data.workflowId, name, version: 2, enabled: true, tags: [], status: 'updated' });
    expect((await svc.api.get(wf(`/${created.data.workflowId}`))).body).toMatchObject({ description: 'one step', nodes: [{ name: 'only' }] });

    const enabled = await bridge.call('create_workflow', { definition: echoDefinition(uniqueName('wf-enabled')), enable: true, overwrite: true });
    expect(enabled.data).toMatchObject({ enabled: true, status: 'created' });
  });

  it('an invalid definition is INVALID_INPUT with the problems; bad arguments name the field', async () => {
    const name = uniqueName('wf-invalid');
    const invalid = await bridge.call('create_workflow', { definition: { name, nodes: [{ name: 'x', nodeType: 'step', executorKey: 'no-such-executor' }] } });
    expect(invalid.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(invalid.error!.details!.problems.join(' ')).toContain('no-such-executor');
    expect((await svc.api.get(`${wf()}?query=${encodeURIComponent(name)}`)).body.workflows).toEqual([]);

    const missing = await bridge.call('create_workflow', {});
    expect(missing.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition', 'yaml'] } });
    const badType = await bridge.call('create_workflow', { definition: { name, nodes: [{ name: 'x', nodeType: 'teleport' }] } });
    expect(badType.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition.nodes.0.nodeType'] } });
    const noName = await bridge.call('create_workflow', { definition: { nodes: [] } });
    expect(noName.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition.name'] } });
  });
});

describe('semantic validate_workflow', () => {
  it('answers valid or every problem, without saving', async () => {
    const name = uniqueName('wf-validate');
    const valid = await bridge.call('validate_workflow', { definition: echoDefinition(name) });
    expect(valid).toMatchObject({ ok: true, data: { valid: true, problems: [] } });
    const invalid = await bridge.call('validate_workflow', {
      definition: { name, nodes: [{ name: 'x', nodeType: 'step', executorKey: 'no-such-executor' }, { name: 'c', nodeType: 'condition', conditionCel: 'input.(' }] },
    });
    expect(invalid.data.valid).toBe(false);
    expect(invalid.data.problems.length).toBeGreaterThanOrEqual(2);
    expect((await svc.api.get(`${wf()}?query=${encodeURIComponent(name)}`)).body.workflows).toEqual([]);
    const wrongShape = await bridge.call('validate_workflow', { definition: { name, nodes: 'A then B' } });
    expect(wrongShape.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition.nodes'] } });
  });
});

describe('semantic toggle_workflow', () => {
  it('enables and disables; unknown and malformed ids', async () => {
    const workflow = await svc.createWorkflow({ ...echoDefinition(uniqueName('wf-toggle')), canvas: CANVAS });
    const on = await bridge.call('toggle_workflow', { workflowId: workflow.id, enabled: true });
    expect(on.data).toEqual({ workflowId: workflow.id, name: workflow.name, enabled: true, version: 1 });
    const off = await bridge.call('toggle_workflow', { workflowId: workflow.id, enabled: false });
    expect(off.data.enabled).toBe(false);
    expect((await svc.api.get(wf(`/${workflow.id}`))).body.enabled).toBe(false);

    expect((await bridge.call('toggle_workflow', { workflowId: UNKNOWN_ID, enabled: true })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await bridge.call('toggle_workflow', { workflowId: 'nope', enabled: true })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['workflowId'] } });
    expect((await bridge.call('toggle_workflow', { workflowId: workflow.id })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['enabled'] } });
  });
});

describe('semantic delete_workflow', () => {
  it('requires confirm: true, then deletes the workflow with its runs', async () => {
    const { workflowId, run } = await svc.runWorkflow({ ...echoDefinition(uniqueName('wf-delete')), canvas: CANVAS });
    for (const args of [{ workflowId }, { workflowId, confirm: false }]) {
      const refused = await bridge.call('delete_workflow', args);
      expect(refused.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['confirm'] } });
      expect(refused.error!.message).toContain('confirm: must be true');
    }
    expect((await svc.api.get(wf(`/${workflowId}`))).status).toBe(200);

    const deleted = await bridge.call('delete_workflow', { workflowId, confirm: true });
    expect(deleted.data).toMatchObject({ workflowId, deleted: true, runsDeleted: 1 });
    expect((await svc.api.get(wf(`/${workflowId}`))).status).toBe(404);
    expect((await svc.api.get(`/api/v1/runs/${run.id}`)).status).toBe(404);
    expect((await bridge.call('delete_workflow', { workflowId, confirm: true })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
  });
});

describe('orchestrator create_workflow', () => {
  it('creates an enabled workflow at workflow_path; CONFLICT without overwrite; updated with it', async () => {
    const name = uniqueName('orch-create');
    const created = await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A')], tags: ['build'] } });
    expect(created.data.status).toBe('created');
    expect(created.data.workflow_path).toMatch(new RegExp(`^${svc.baseUrl}/api/v1/workflows/[0-9a-f]{24}$`));
    const stored = await fetch(created.data.workflow_path).then((r) => r.json());
    expect(stored).toMatchObject({ name, enabled: true, tags: ['build'], version: 1 });

    const duplicate = await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A')] } });
    expect(duplicate.error).toMatchObject({ code: 'CONFLICT' });
    const updated = await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A'), echoStep('B')] }, overwrite: true });
    expect(updated.data).toEqual({ status: 'updated', workflow_path: created.data.workflow_path });
    expect((await svc.api.get(wf(`/${idOfPath(created.data.workflow_path)}`))).body).toMatchObject({ version: 2, nodes: [{ name: 'A' }, { name: 'B' }] });

    const disabled = await orchestrator.call('create_workflow', { name: uniqueName('orch-disabled'), definition: { nodes: [echoStep('A')], enabled: false } });
    expect((await svc.api.get(wf(`/${idOfPath(disabled.data.workflow_path)}`))).body.enabled).toBe(false);
  });

  it('invalid definitions and arguments', async () => {
    const invalid = await orchestrator.call('create_workflow', { name: uniqueName('orch-bad'), definition: { nodes: [{ name: 'x', nodeType: 'step', executorKey: 'nope' }] } });
    expect(invalid.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(invalid.error!.details!.problems.length).toBeGreaterThan(0);
    const mismatch = await orchestrator.call('create_workflow', { name: 'one', definition: { name: 'other', nodes: [] } });
    expect(mismatch.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition.name'] } });
    expect((await orchestrator.call('create_workflow', { definition: { nodes: [] } })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['name'] } });
    expect((await orchestrator.call('create_workflow', { name: 'x' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition', 'yaml'] } });
  });
});

describe('orchestrator list_workflows', () => {
  it('filters by category and counts running executions', async () => {
    const category = `cat-${uniqueName('x').split(' ')[1]}`;
    const idle = await orchestrator.call('create_workflow', { name: uniqueName('orch-idle'), definition: { nodes: [echoStep('A')], tags: [category] } });
    const busyName = uniqueName('orch-busy');
    const busy = await orchestrator.call('create_workflow', { name: busyName, definition: { nodes: [gated('G')], tags: [category, 'other'] } });
    await svc.createWorkflow({ ...echoDefinition(uniqueName('orch-untagged')), canvas: CANVAS });
    const busyId = idOfPath(busy.data.workflow_path);
    const triggered = await svc.trigger(busyId, {});
    await svc.waitForGate(busyId, triggered.body.runId);

    const listed = await orchestrator.call('list_workflows', { category, include_running: true });
    expect(listed.data.running_count).toBe(1);
    expect(listed.data.workflows).toMatchObject([
      { name: busyName, workflow_path: busy.data.workflow_path, id: busyId, tags: [category, 'other'], enabled: true, running_count: 1 },
      { workflow_path: idle.data.workflow_path, running_count: 0 },
    ]);
    const plain = await orchestrator.call('list_workflows', { category });
    expect(plain.data.running_count).toBe(1);
    expect(plain.data.workflows[0]).not.toHaveProperty('running_count');
    expect((await orchestrator.call('list_workflows', { category: 'no-such-category' })).data).toEqual({ workflows: [], running_count: 0 });
    expect((await orchestrator.call('list_workflows', { include_running: 'yes' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['include_running'] } });
    await svc.api.post(wf(`/${busyId}/runs/${triggered.body.runId}/cancel`), {});
  });
});

describe('orchestrator run_workflow', () => {
  it('success: waits for the run and reports every step', async () => {
    const name = uniqueName('orch-run');
    const created = await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A', { greeting: { $cel: 'input.who' } }), echoStep('B')] } });
    const ran = await orchestrator.call('run_workflow', { workflow_name: name, parameters: { who: 'world' }, timeout: 30, parallel_limit: 2 });
    expect(ran.data).toMatchObject({ status: 'success', steps_completed: 2, steps_total: 2, error_message: null });
    expect(ran.data.step_results.map((s: any) => [s.step_name, s.status])).toEqual([['A', 'completed'], ['B', 'completed']]);
    expect(ran.data.step_results[0].output.arguments).toEqual({ greeting: 'world' });
    expect(ran.data.step_results[0].duration).toBeGreaterThanOrEqual(0);
    expect(ran.data.execution_time).toBeGreaterThanOrEqual(0);
    // workflow_id is the execution (run) id.
    const run = await svc.api.get(`/api/v1/runs/${ran.data.workflow_id}`);
    expect(run.body).toMatchObject({ workflowName: name, status: 'completed', timeoutSeconds: 30, initialInput: { who: 'world' } });

    const byPath = await orchestrator.call('run_workflow', { workflow_name: created.data.workflow_path, parameters: { who: 'path' } });
    expect(byPath.data.status).toBe('success');
    expect(byPath.data.workflow_id).not.toBe(ran.data.workflow_id);
  });

  it('failed: a step fails for good', async () => {
    const name = uniqueName('orch-fail');
    await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A'), { name: 'Boom', nodeType: 'step', executorKey: 'flaky', config: { message: 'kaput', times: 99 } }, echoStep('C')] } });
    const ran = await orchestrator.call('run_workflow', { workflow_name: name, timeout: 30 });
    expect(ran.data).toMatchObject({ status: 'failed', steps_completed: 1, steps_total: 3 });
    expect(ran.data.error_message).toContain('kaput');
    expect(ran.data.step_results.map((s: any) => [s.step_name, s.status])).toEqual([['A', 'completed'], ['Boom', 'failed']]);
  });

  it('partial: stopped at a human gate by its timeout after a step completed; failed when nothing completed', async () => {
    const name = uniqueName('orch-gate');
    await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A'), gated('Approve me'), echoStep('C')] } });
    const ran = await orchestrator.call('run_workflow', { workflow_name: name, timeout: 1 });
    expect(ran.data).toMatchObject({ status: 'partial', steps_completed: 1, steps_total: 3 });
    expect(ran.data.error_message).toMatch(/time/i);
    expect(ran.data.step_results[0]).toMatchObject({ step_name: 'A', status: 'completed' });
    const run = await svc.api.get(`/api/v1/runs/${ran.data.workflow_id}`);
    expect(run.body).toMatchObject({ status: 'failed', cancelledBy: { userId: null, username: 'timeout', via: 'system' } });
    expect(ran.data.execution_time).toBeGreaterThanOrEqual(1);

    const first = uniqueName('orch-gate-first');
    await orchestrator.call('create_workflow', { name: first, definition: { nodes: [gated('Approve me'), echoStep('B')] } });
    const nothing = await orchestrator.call('run_workflow', { workflow_name: first, timeout: 1 });
    expect(nothing.data).toMatchObject({ status: 'failed', steps_completed: 0, steps_total: 2 });
  });

  it('partial: cancelled while waiting, after a step completed (cancel_workflow)', async () => {
    const name = uniqueName('orch-cancel');
    const created = await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A'), gated('Approve me')] } });
    const workflowId = idOfPath(created.data.workflow_path);
    const running = orchestrator.call('run_workflow', { workflow_name: name, timeout: 60 });
    const runId = await onlyRunOf(workflowId);
    await svc.waitForGate(workflowId, runId);

    const cancelled = await orchestrator.call('cancel_workflow', { workflow_id: runId, reason: 'changed my mind' });
    expect(cancelled.data).toMatchObject({ status: 'cancelled', steps_completed: 1 });
    const ran = await running;
    expect(ran.data).toMatchObject({ status: 'partial', workflow_id: runId, steps_completed: 1, steps_total: 2 });
    expect(ran.data.error_message).toContain('changed my mind');
    expect(ran.data.step_results.map((s: any) => s.status)).toEqual(['completed', 'cancelled']);

    const again = await orchestrator.call('cancel_workflow', { workflow_id: runId });
    expect(again.data).toMatchObject({ status: 'cancelled', steps_completed: 1 });
  });

  it('dry_run checks without executing', async () => {
    const name = uniqueName('orch-dry');
    await orchestrator.call('create_workflow', { name, definition: { nodes: [echoStep('A'), echoStep('B')] } });
    const dry = await orchestrator.call('run_workflow', { workflow_name: name, dry_run: true });
    expect(dry.data).toEqual({ status: 'success', workflow_id: null, steps_completed: 0, steps_total: 2, step_results: [], execution_time: 0, error_message: null });
    expect((await svc.api.get(`/api/v1/runs?workflowId=${(await orchestrator.call('list_workflows', {})).data.workflows.find((w: any) => w.name === name).id}`)).body.runs).toEqual([]);
  });

  it('errors: unknown workflow, invalid arguments', async () => {
    expect((await orchestrator.call('run_workflow', { workflow_name: 'no such workflow' })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await orchestrator.call('run_workflow', { workflow_name: `${svc.baseUrl}/api/v1/workflows/${UNKNOWN_ID}` })).error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    expect((await orchestrator.call('run_workflow', {})).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['workflow_name'] } });
    expect((await orchestrator.call('run_workflow', { workflow_name: 'x', timeout: 0 })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['timeout'] } });
    expect((await orchestrator.call('run_workflow', { workflow_name: 'x', parameters: [1] })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['parameters'] } });
  });
});

describe('the "partial" rule (orchestrator/outcome.ts)', () => {
  it('success when completed; partial when stopped from outside or unfinished after a completed step; failed otherwise', () => {
    const timeout = { userId: null, username: 'timeout', via: 'system' };
    const person = { userId: 'u-ada', username: 'ada', via: 'jwt' };
    const cases: Array<[string, unknown, number, string]> = [
      ['completed', null, 2, 'success'],
      ['failed', null, 2, 'failed'], // a step failed for good
      ['failed', timeout, 1, 'partial'],
      ['failed', timeout, 0, 'failed'],
      ['failed', 'timeout', 1, 'partial'], // a run stored before #18 names its canceller
      ['cancelled', person, 1, 'partial'],
      ['cancelled', person, 0, 'failed'],
      ['awaiting_approval', null, 1, 'partial'], // the wait ended at a human gate
      ['running', null, 0, 'failed'],
    ];
    for (const [status, cancelledBy, completed, expected] of cases) {
      expect(outcomeOf({ status, cancelledBy }, completed), `${status}/${JSON.stringify(cancelledBy)}/${completed}`).toBe(expected);
    }
  });

  it('an unfinished run: error_message says where it waits and how to stop it', () => {
    const run = { id: 'r1', status: 'awaiting_approval', errorSummary: null, runState: { state: 'waiting-approval' }, pendingRequirements: [{ stepId: 's1', stepName: 'Approve me' }] };
    expect(errorMessageOf(run as any, 'partial', 50)).toBe(
      "The run had not ended after 50 s of waiting: it is awaiting_approval, waiting for a human decision at 'Approve me'. It goes on in Switchyard; stop it with cancel_workflow (workflow_id r1).",
    );
    expect(errorMessageOf({ ...run, status: 'completed' } as any, 'success', 50)).toBeNull();
  });
});

describe('orchestrator cancel_workflow', () => {
  it('errors: unknown or malformed execution id; an execution that already finished', async () => {
    expect((await orchestrator.call('cancel_workflow', { workflow_id: UNKNOWN_ID })).error).toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect((await orchestrator.call('cancel_workflow', { workflow_id: 'wf-abc123' })).error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['workflow_id'] } });
    const { run } = await svc.runWorkflow({ ...echoDefinition(uniqueName('orch-done')), canvas: CANVAS });
    const finished = await orchestrator.call('cancel_workflow', { workflow_id: run.id });
    expect(finished.error).toMatchObject({ code: 'CONFLICT', details: { currentStatus: 'completed' } });
  });
});

describe('definitions as YAML text (`yaml` instead of `definition`)', () => {
  const exampleYaml = (name: string) => readFileSync(new URL(`../examples/workflows/${name}.yaml`, import.meta.url), 'utf8');
  const yamlOf = (name: string, nodes = '  - {name: A, nodeType: step, executorKey: echo}\n') => `name: ${name}\nnodes:\n${nodes}`;

  it('semantic create_workflow and validate_workflow take YAML; the stored definition is the JSON twin\'s', async () => {
    const valid = await bridge.call('validate_workflow', { yaml: exampleYaml('tree-shaped') });
    expect(valid).toMatchObject({ ok: true, data: { valid: true, problems: [] } });
    const created = await bridge.call('create_workflow', { yaml: exampleYaml('multi-step-router'), overwrite: true });
    expect(created).toMatchObject({ ok: true, data: { name: 'Multi-Step Router', status: expect.stringMatching(/created|updated/) } });
    const stored = (await svc.api.get(wf(`/${created.data.workflowId}`))).body;
    const json = JSON.parse(readFileSync(new URL('../examples/workflows/multi-step-router.json', import.meta.url), 'utf8'));
    expect(stored).toMatchObject({ description: json.description, canvas: json.canvas });
    expect(stored.nodes.map((node: any) => node.name)).toEqual(json.nodes.map((node: any) => node.name));

    // Overwrite by the name the YAML holds; the canvas is defaulted as for `definition`.
    const name = uniqueName('wf-yaml');
    const first = await bridge.call('create_workflow', { yaml: yamlOf(name) });
    expect(first.data).toMatchObject({ name, version: 1, status: 'created' });
    const second = await bridge.call('create_workflow', { yaml: yamlOf(name, '  - {name: A, nodeType: step, executorKey: echo}\n  - {name: B, nodeType: step, executorKey: echo}\n'), overwrite: true });
    expect(second.data).toMatchObject({ workflowId: first.data.workflowId, version: 2, status: 'updated' });
    expect((await svc.api.get(wf(`/${first.data.workflowId}`))).body).toMatchObject({ canvas: CANVAS, nodes: [{ name: 'A' }, { name: 'B' }] });
  });

  it('the orchestrator create_workflow takes YAML too', async () => {
    const name = uniqueName('orch-yaml');
    const created = await orchestrator.call('create_workflow', { name, yaml: 'nodes:\n  - {name: A, nodeType: step, executorKey: echo}\ntags: [build]\n' });
    expect(created).toMatchObject({ ok: true, data: { status: 'created' } });
    expect((await svc.api.get(wf(`/${idOfPath(created.data.workflow_path)}`))).body).toMatchObject({ name, enabled: true, tags: ['build'] });
    const malformed = await orchestrator.call('create_workflow', { name, yaml: 'nodes: [\n' });
    expect(malformed.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['yaml'] } });
    expect(malformed.error!.message).toMatch(/^YAML line \d+, column \d+: /);
  });

  it('both, neither, a wrong shape or too much text are INVALID_INPUT naming the argument', async () => {
    const both = await bridge.call('create_workflow', { definition: echoDefinition(uniqueName('both')), yaml: yamlOf('x') });
    expect(both.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['definition', 'yaml'] } });
    const shape = await bridge.call('create_workflow', { yaml: 'name: x\nnodes: A then B\n' });
    expect(shape.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['yaml.nodes'] } });
    const huge = await bridge.call('create_workflow', { yaml: `name: x\ndescription: ${'x'.repeat(1024 * 1024)}\nnodes: []\n` });
    expect(huge.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['yaml'] } });
  });

  it('malformed YAML gets the shared parser\'s message (the one the API answers) naming line and column', async () => {
    const text = 'name: x\nnodes: []\nname: again\n';
    const expected = "YAML line 3, column 1: the key 'name' appears twice in one mapping";
    expect(() => parseYamlDefinition(text)).toThrow(expected);
    const viaBridge = await bridge.call('validate_workflow', { yaml: text });
    expect(viaBridge.error).toMatchObject({ code: 'INVALID_INPUT', message: expected, details: { fields: ['yaml'] } });
  });
});
