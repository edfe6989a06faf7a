/**
 * The MCP bridge (issue #8) through a real SDK client against the real API: the tool listing
 * (schemas, annotations), the envelope on success and failure, gating flags, both transports and
 * the process itself.
 */
import { describe, expect, it } from 'vitest';
import { annotationsOf, SEMANTIC_TOOLS, ORCHESTRATOR_TOOLS } from '@switchyard/mcp-bridge';
import { bridgeInProcess, bridgeOverHttp, bridgeOverStdio, type BridgeClient } from './support/bridge.ts';
import { useServiceAndBridge } from './support/bridge-hooks.ts';
import { CANVAS, echoStep, uniqueName, type TestService } from './support/service.ts';

let svc: TestService;
let bridge: BridgeClient;
useServiceAndBridge((service, client) => ([svc, bridge] = [service, client]));

/** The annotations each tool must carry (issue #8): reads, creating writes, irreversible ones, launches. */
const EXPECTED_KIND: Record<string, 'read' | 'write' | 'irreversible' | 'launch'> = {
  list_workflows: 'read',
  get_workflow: 'read',
  create_workflow: 'write',
  validate_workflow: 'read',
  toggle_workflow: 'write',
  delete_workflow: 'irreversible',
  run_workflow: 'launch',
  send_event: 'launch',
  list_runs: 'read',
  get_run: 'read',
  watch_run: 'read',
  explain_run: 'read',
  get_node_detail: 'read',
  list_artifacts: 'read',
  get_run_events: 'read',
  get_timeline: 'read',
  list_pending_approvals: 'read',
  resolve_approval: 'irreversible',
  pause_run: 'write',
  resume_run: 'launch',
  cancel_run: 'irreversible',
  retry_run: 'write',
  rerun_node: 'write',
  replay_run: 'write',
  ask_human: 'write',
  list_schedules: 'read',
  create_schedule: 'launch',
  pause_schedule: 'write',
  resume_schedule: 'launch',
  trigger_schedule: 'launch',
};

/** The orchestrator surface's tools and kinds. */
const ORCHESTRATOR_KIND: Record<string, 'read' | 'write' | 'irreversible' | 'launch'> = {
  run_workflow: 'launch',
  list_workflows: 'read',
  create_workflow: 'write',
  cancel_workflow: 'irreversible',
};

describe('tools/list', () => {
  it('lists every tool with a description, input and output schema, a title, and annotations derived from its kind', async () => {
    const tools = await bridge.tools();
    expect([...tools.keys()]).toEqual(SEMANTIC_TOOLS.map((t) => t.name));
    for (const [name, tool] of tools) {
      expect(tool.description.length, name).toBeGreaterThan(60);
      expect(tool.title, name).toBeTruthy();
      expect(tool.inputSchema.type, name).toBe('object');
      expect(tool.inputSchema.additionalProperties, name).toBe(false);
      expect(tool.outputSchema.properties.ok, name).toBeDefined();
      const kind = SEMANTIC_TOOLS.find((t) => t.name === name)!.kind;
      expect(tool.annotations, name).toEqual(annotationsOf(kind, tool.title));
      expect(kind, name).toBe(EXPECTED_KIND[name]);
    }
    expect([...tools.keys()].sort()).toEqual(Object.keys(EXPECTED_KIND).sort());
    expect(tools.get('list_runs').annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false });
    expect(tools.get('run_workflow').annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, openWorldHint: true });
  });
});

describe('reads and a run', () => {
  it('finds a workflow by name, runs it to the end, and reads the run', async () => {
    const name = uniqueName('bridge');
    const workflow = await svc.createWorkflow({ name, description: 'echo twice', canvas: CANVAS, nodes: [echoStep('A', { greeting: { $cel: 'input.prompt' } }), echoStep('B')] });
    await svc.enable(workflow.id);

    const listed = await bridge.call('list_workflows', { search: name });
    expect(listed.ok).toBe(true);
    expect(listed.data.workflows).toMatchObject([{ workflowId: workflow.id, name, enabled: true, numNodes: 2 }]);

    const got = await bridge.call('get_workflow', { workflowName: name });
    expect(got.data.workflow).toMatchObject({ id: workflow.id, nodes: [{ name: 'A' }, { name: 'B' }] });

    const ran = await bridge.call('run_workflow', { workflowName: name, prompt: 'hello', waitForTerminal: true, timeoutMs: 10_000 });
    expect(ran.ok).toBe(true);
    expect(ran.data).toMatchObject({ workflowId: workflow.id, waited: true, reachedTerminal: true, timedOut: false, run: { status: 'completed', runState: { state: 'succeeded' } } });
    expect(ran.data.finalOutput.input.arguments).toEqual({ greeting: 'hello' });

    const run = await bridge.call('get_run', { runId: ran.data.runId });
    expect(run.data.run).toMatchObject({ runId: ran.data.runId, workflowName: name, status: 'completed', nodeStatusCounts: { completed: 2 } });
    expect(run.data.initialInput).toEqual({ prompt: 'hello' });

    const runs = await bridge.call('list_runs', { workflowName: name });
    expect(runs.data.runs.map((r: any) => r.runId)).toEqual([ran.data.runId]);
    expect(runs.data.total).toBe(1);
  });

  it('launches in the background by default, and checks without starting on dryRun', async () => {
    const workflow = await svc.createWorkflow({ name: uniqueName('bridge-bg'), canvas: CANVAS, nodes: [echoStep('A')] });
    await svc.enable(workflow.id);
    const launched = await bridge.call('run_workflow', { workflowId: workflow.id, input: { n: 1 } });
    expect(launched.data).toMatchObject({ workflowId: workflow.id, waited: false, dryRun: false });
    expect(launched.data.runId).toMatch(/^[0-9a-f]{24}$/);
    const dry = await bridge.call('run_workflow', { workflowId: workflow.id, dryRun: true });
    expect(dry.data).toMatchObject({ runId: null, dryRun: true, valid: true, problems: [] });
  });
});

describe('errors come back as envelopes', () => {
  it('unknown ids map to *_NOT_FOUND from the API error body', async () => {
    const run = await bridge.call('get_run', { runId: '0123456789abcdef01234567' });
    expect(run).toMatchObject({ ok: false, isError: true, error: { code: 'RUN_NOT_FOUND', message: 'Run not found' } });
    const workflow = await bridge.call('get_workflow', { workflowId: '0123456789abcdef01234567' });
    expect(workflow.error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
    const byName = await bridge.call('run_workflow', { workflowName: 'no such workflow anywhere' });
    expect(byName.error).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
  });

  it('invalid arguments are INVALID_INPUT naming the field, not a protocol error', async () => {
    const wrongType = await bridge.call('list_runs', { limit: 'ten' });
    expect(wrongType).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { fields: ['limit'] } } });
    expect(wrongType.error!.message).toMatch(/^Invalid arguments: limit: /);
    const missing = await bridge.call('get_run', {});
    expect(missing.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['runId'] } });
    const unknownKey = await bridge.call('get_run', { runId: '0123456789abcdef01234567', verbose: true });
    expect(unknownKey.error).toMatchObject({ code: 'INVALID_INPUT' });
    const outOfRange = await bridge.call('list_runs', { limit: 201 });
    expect(outOfRange.error).toMatchObject({ code: 'INVALID_INPUT', details: { fields: ['limit'] } });
  });

  it('an API that is down is UNAVAILABLE, naming the URL that failed', async () => {
    const down = await bridgeInProcess('http://127.0.0.1:9');
    try {
      const answer = await down.call('list_runs', {});
      expect(answer.error).toMatchObject({ code: 'UNAVAILABLE', details: { url: 'http://127.0.0.1:9/api/v1/runs?page=1&perPage=20&includeNodeRuns=false' } });
      expect(answer.error!.message).toContain('http://127.0.0.1:9/api/v1/runs');
    } finally {
      await down.close();
    }
  });
});

describe('gating', () => {
  it('--read-only exposes only read tools; --allowed-tools only the named ones', async () => {
    const readOnly = await bridgeInProcess(svc.baseUrl, ['--read-only']);
    try {
      const names = [...(await readOnly.tools()).keys()];
      expect(names).toEqual(SEMANTIC_TOOLS.filter((t) => t.kind === 'read').map((t) => t.name));
      expect(names).not.toContain('run_workflow');
    } finally {
      await readOnly.close();
    }
    const allowed = await bridgeInProcess(svc.baseUrl, ['--allowed-tools', 'get_run,list_runs']);
    try {
      expect([...(await allowed.tools()).keys()].sort()).toEqual(['get_run', 'list_runs']);
    } finally {
      await allowed.close();
    }
    const none = await bridgeInProcess(svc.baseUrl, ['--allowed-tools', '']);
    try {
      expect((await none.tools()).size).toBe(0);
    } finally {
      await none.close();
    }
    await expect(bridgeInProcess(svc.baseUrl, ['--allowed-tools', 'get_run,launch_rockets'])).rejects.toThrow(/unknown tool\(s\) launch_rockets/);
  });

  it('the orchestrator surface lists exactly its tools', async () => {
    const orchestrator = await bridgeInProcess(svc.baseUrl, ['--surface', 'orchestrator']);
    try {
      const tools = await orchestrator.tools();
      expect([...tools.keys()]).toEqual(['run_workflow', 'list_workflows', 'create_workflow', 'cancel_workflow']);
      for (const [name, tool] of tools) expect(tool.annotations, name).toEqual(annotationsOf(ORCHESTRATOR_KIND[name]!, tool.title));
      expect(ORCHESTRATOR_TOOLS.map((t) => t.name)).toEqual([...tools.keys()]);
    } finally {
      await orchestrator.close();
    }
  });
});

describe('transports and the process', () => {
  it('serves the same tools over stdio (the switchyard-mcp command) and logs only to stderr', async () => {
    const stdio = await bridgeOverStdio(svc.baseUrl);
    try {
      expect([...(await stdio.tools()).keys()]).toEqual(SEMANTIC_TOOLS.map((t) => t.name));
      const answer = await stdio.call('list_runs', { limit: 1 });
      expect(answer.ok).toBe(true);
      expect(stdio.stderr()).toContain('MCP bridge ready on stdio');
    } finally {
      await stdio.close();
    }
  });

  it('serves Streamable HTTP at /mcp (to a caller with a bearer token)', async () => {
    const http = await bridgeOverHttp(svc.baseUrl, 'a-caller-token');
    try {
      expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const answer = await http.call('get_run', { runId: '0123456789abcdef01234567' });
      expect(answer.error).toMatchObject({ code: 'RUN_NOT_FOUND' });
      const get = await fetch(http.url);
      expect(get.status).toBe(405);
    } finally {
      await http.close();
    }
  });
});
