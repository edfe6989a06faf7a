/**
 * Run documents stay bounded (security issue, item 4; .notes/security-run-bounds.md): a flood of
 * human requests on one run is refused past the per-run caps, the embedded journal under DATA_DIR
 * stays bounded (compacted by bytes), and the run's gate stays decidable; oversized human
 * requests and decisions are 400s naming the field; human requests count in the approvals rate
 * limit; a write the store refuses for its size is a 409 `document_too_large`, not a 500.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { calculateObjectSize } from 'bson';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DocumentTooLargeError } from '@switchyard/store';
import { CANVAS, echoStep, startService, uniqueName, wf, type ApiResponse, type TestService } from './support/service.ts';

const MIB = 1024 * 1024;

let svc: TestService;
beforeAll(async () => {
  // Default bounds (100 open human requests, 64 MiB journal compaction threshold), embedded store persisted under DATA_DIR.
  svc = await startService({ persistentStore: true });
});
afterAll(async () => {
  await svc?.close();
});

const runPath = (workflowId: string, runId: string, suffix = '') => wf(`/${workflowId}/runs/${runId}${suffix}`);

interface Parked {
  workflowId: string;
  runId: string;
  /** The gate's node id (human requests are asked on it) and stepId. */
  nodeId: string;
  gateStepId: string;
}

/** Starts a run whose step `Gate` has `humanReview` and waits until it is parked at the gate. */
async function parkedAt(humanReview: Record<string, unknown>): Promise<Parked> {
  const { workflowId, runId } = await svc.startRun({
    name: uniqueName('bounds'),
    canvas: CANVAS,
    nodes: [echoStep('Gate', { draft: 'v1' }, { humanReview }), echoStep('After', { done: true })],
  });
  const run = await svc.waitForGate(workflowId, runId);
  return { workflowId, runId, nodeId: await nodeIdOf(svc, workflowId, 'Gate'), gateStepId: run.pendingRequirements[0].stepId };
}

/** The id of the workflow's node named `name` (human requests are asked on a node of the run's definition). */
async function nodeIdOf(service: TestService, workflowId: string, name: string): Promise<string> {
  const workflow = await service.api.get(wf(`/${workflowId}`));
  type Node = { id: string; name: string; children?: Node[] };
  const all = (nodes: Node[]): Node[] => nodes.flatMap((node) => [node, ...all(node.children ?? [])]);
  const node = all(workflow.body.nodes).find((candidate) => candidate.name === name);
  if (!node) throw new Error(`no node ${name}: ${workflow.text.slice(0, 500)}`);
  return node.id;
}

function ask(run: Parked, body: Record<string, unknown>): Promise<ApiResponse> {
  return svc.api.post(runPath(run.workflowId, run.runId, '/human-requests'), { nodeId: run.nodeId, ...body });
}

function journalBytes(): number {
  return statSync(join(svc.storeDir!, 'journal.jsonl')).size;
}

describe('a flood of human requests on one run', () => {
  it('is refused past 100 open requests, leaves the journal under 64 MiB and the gate decidable', { timeout: 120_000 }, async () => {
    const run = await parkedAt({ requiresConfirmation: true });
    // Each request near the largest the schema allows (4 000 + 20 000 characters): ~49 KB as stored.
    const body = { prompt: 'p'.repeat(4_000), context: 'c'.repeat(20_000) };
    const statuses: number[] = [];
    const refusals: ApiResponse[] = [];
    const accepted: string[] = [];
    for (let i = 0; i < 200; i++) {
      const response = await ask(run, body);
      statuses.push(response.status);
      if (response.status === 201) accepted.push(response.body.requestId);
      else refusals.push(response);
    }
    expect(statuses.slice(0, 100).every((status) => status === 201)).toBe(true);
    expect(statuses.slice(100).every((status) => status === 409)).toBe(true);
    expect(refusals[0]!.body.detail).toMatchObject({
      error: 'limit_reached',
      details: { limit: 'openHumanRequests', max: 100, current: 100 },
    });
    expect(refusals[0]!.body.detail.message).toContain('SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS=100');

    // The run document holds 100 requests plus the gate: well under MongoDB's 16 MiB, and its BSON close to its JSON.
    const doc = await svc.store.collection('workflow_runs').findOne({ _id: new ObjectId(run.runId) });
    const bsonBytes = calculateObjectSize(doc!);
    expect(bsonBytes).toBeLessThan(8 * MIB);
    expect(bsonBytes).toBeLessThan(1.1 * Buffer.byteLength(JSON.stringify(doc)));
    if (svc.storeDir) {
      // Without compaction by bytes, the 100 pushes (each journalling the whole requirements array) wrote ~330 MB of journal (measured).
      expect(journalBytes()).toBeLessThan(64 * MIB);
      expect(statSync(join(svc.storeDir, 'snapshot.jsonl')).size).toBeGreaterThan(4 * MIB);
    }

    // An answer frees a place; the gate is decided and the run completes.
    const answered = await svc.approve(run.workflowId, run.runId, { stepId: accepted[0], resolution: 'user_input', userInput: { response: 'yes' } });
    expect(answered.status, answered.text).toBe(200);
    expect((await ask(run, { prompt: 'One more?' })).status).toBe(201);
    expect((await ask(run, { prompt: 'And another?' })).status).toBe(409);
    const decided = await svc.approve(run.workflowId, run.runId, { stepId: run.gateStepId, resolution: 'confirm' });
    expect(decided.status, decided.text).toBe(200);
    const done = await svc.waitForRun(run.workflowId, run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    if (svc.storeDir) expect(journalBytes()).toBeLessThan(64 * MIB);
  });
});

describe('size limits of one human request and one decision', () => {
  it('refuses a prompt over 8 KiB of JSON and a request over 64 KiB as stored, naming the field and the limit', async () => {
    const run = await parkedAt({ requiresConfirmation: true });
    try {
      const prompt = await ask(run, { prompt: '€'.repeat(4_000) }); // 4 000 characters: the schema allows them; 12 002 bytes
      expect(prompt.status).toBe(400);
      expect(prompt.body.detail).toMatchObject({ error: 'invalid_request', details: { field: 'prompt', bytes: 12_002, limitBytes: 8_192 } });
      expect(prompt.body.detail.message).toBe('prompt is 12002 bytes of JSON, over the limit of 8192 bytes');

      const choices = Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(500, 'x'));
      const whole = await ask(run, { prompt: 'p'.repeat(4_000), context: 'c'.repeat(20_000), choices });
      expect(whole.status).toBe(400);
      expect(whole.body.detail).toMatchObject({ error: 'invalid_request', details: { field: 'humanRequest', limitBytes: 65_536 } });
      expect(whole.body.detail.message).toContain('over the limit of 65536 bytes');
    } finally {
      await svc.api.post(runPath(run.workflowId, run.runId, '/cancel'), {});
    }
  });

  it('refuses an editedOutput over 256 KiB and an answer over 12 KiB, and then takes a decision that fits', async () => {
    const review = await parkedAt({ requiresOutputReview: true });
    const big = await svc.approve(review.workflowId, review.runId, { stepId: review.gateStepId, resolution: 'edit', editedOutput: { text: 'x'.repeat(300 * 1024) } });
    expect(big.status).toBe(400);
    expect(big.body.detail).toMatchObject({ error: 'invalid_request', details: { field: 'editedOutput', limitBytes: 262_144 } });

    const question = await ask(review, { prompt: 'Why?' });
    expect(question.status).toBe(201);
    const long = await svc.approve(review.workflowId, review.runId, { stepId: question.body.requestId, resolution: 'user_input', userInput: { response: 'a'.repeat(13_000) } });
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatchObject({ details: { field: 'userInput', limitBytes: 12_288 } });
    const short = await svc.approve(review.workflowId, review.runId, { stepId: question.body.requestId, resolution: 'user_input', userInput: { response: 'because' } });
    expect(short.status, short.text).toBe(200);

    const edited = await svc.approve(review.workflowId, review.runId, { stepId: review.gateStepId, resolution: 'edit', editedOutput: { text: 'x'.repeat(200 * 1024) } });
    expect(edited.status, edited.text).toBe(200);
    expect((await svc.waitForRun(review.workflowId, review.runId)).status).toBe('completed');
  });
});

describe('a write the store refuses for its size', () => {
  const tooLarge = () => new DocumentTooLargeError("document is 16777300 bytes of BSON, over MongoDB's 16 MiB limit");

  it('is a 409 document_too_large for a decision, which leaves the gate decidable', async () => {
    const run = await parkedAt({ requiresConfirmation: true });
    const spy = vi.spyOn(svc.repos.runs, 'decideRequirement').mockRejectedValueOnce(tooLarge());
    try {
      const refused = await svc.approve(run.workflowId, run.runId, { stepId: run.gateStepId, resolution: 'confirm' });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatchObject({ error: 'document_too_large', details: { stepId: run.gateStepId } });
      expect(refused.body.detail.message).toContain('still undecided');
    } finally {
      spy.mockRestore();
    }
    const decided = await svc.approve(run.workflowId, run.runId, { stepId: run.gateStepId, resolution: 'confirm' });
    expect(decided.status, decided.text).toBe(200);
    expect((await svc.waitForRun(run.workflowId, run.runId)).status).toBe('completed');
  });

  it('is a 409 document_too_large when the real store refuses a decision over 16 MiB, and a smaller decision still goes through', async () => {
    const run = await parkedAt({ requiresOutputReview: true });
    // Grow the run document (behind the API's back) to 200 KiB below the limit: a 256 KiB edit cannot fit, a confirm can.
    const runs = svc.store.collection('workflow_runs');
    const id = new ObjectId(run.runId);
    const bytes = calculateObjectSize((await runs.findOne({ _id: id }))!);
    await runs.updateOne({ _id: id }, { $set: { filler: 'f'.repeat(16 * MIB - bytes - 200 * 1024) } });
    const edit = await svc.approve(run.workflowId, run.runId, { stepId: run.gateStepId, resolution: 'edit', editedOutput: { text: 'x'.repeat(250 * 1024) } });
    expect(edit.status, edit.text.slice(0, 300)).toBe(409);
    expect(edit.body.detail).toMatchObject({ error: 'document_too_large', details: { stepId: run.gateStepId } });
    const confirmed = await svc.approve(run.workflowId, run.runId, { stepId: run.gateStepId, resolution: 'confirm' });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await svc.waitForRun(run.workflowId, run.runId)).status).toBe('completed');
  });

  it('is a 409 document_too_large for a human request', async () => {
    const run = await parkedAt({ requiresConfirmation: true });
    const spy = vi.spyOn(svc.repos.runs, 'addRequirementToLiveRun').mockRejectedValueOnce(tooLarge());
    try {
      const refused = await ask(run, { prompt: 'Room?' });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatchObject({ error: 'document_too_large' });
    } finally {
      spy.mockRestore();
      await svc.api.post(runPath(run.workflowId, run.runId, '/cancel'), {});
    }
  });
});

describe('the approvals rate limit', () => {
  it('counts human requests', async () => {
    const limited = await startService({ edge: { rateLimits: { triggers: 0, approvals: 2 } } });
    try {
      const { workflowId, runId } = await limited.startRun({
        name: uniqueName('limited'),
        canvas: CANVAS,
        nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true } })],
      });
      const gate = (await limited.waitForGate(workflowId, runId)).pendingRequirements[0];
      const nodeId = await nodeIdOf(limited, workflowId, 'Gate');
      const post = () => limited.api.post(runPath(workflowId, runId, '/human-requests'), { nodeId, prompt: 'Again?' });
      expect((await post()).status).toBe(201);
      expect((await post()).status).toBe(201);
      const third = await post();
      expect(third.status).toBe(429);
      expect(third.body.detail.error).toBe('rate_limited');
      expect(third.body.detail.message).toContain('human requests');
      // The same counter as /approve.
      expect((await limited.approve(workflowId, runId, { stepId: gate.stepId, resolution: 'confirm' })).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('engine gates past the stored-requirements cap', () => {
  it("refuse new human requests but are raised and decided: a loop's gate per iteration keeps the run going", { timeout: 60_000 }, async () => {
    const capped = await startService({ env: { SWITCHYARD_MAX_STORED_REQUIREMENTS: '2' } });
    try {
      const { workflowId, runId } = await capped.startRun({
        name: uniqueName('loop-gates'),
        canvas: CANVAS,
        nodes: [
          {
            name: 'Loop',
            nodeType: 'loop',
            loopConfig: { maxIterations: 4 },
            children: [echoStep('Body', { i: { $cel: 'loop_state.iteration' } }, { humanReview: { requiresConfirmation: true } })],
          },
        ],
      });
      const nodeId = await nodeIdOf(capped, workflowId, 'Body');
      const askBody = () => capped.api.post(runPath(workflowId, runId, '/human-requests'), { nodeId, prompt: 'Still there?' });
      const decided = new Set<string>();
      const nextGate = async (): Promise<string> => {
        const run = await capped.waitForGate(workflowId, runId, {
          until: (pending) => pending.some((requirement) => !requirement.stepId.includes(':ask-') && !decided.has(requirement.stepId)),
        });
        return run.pendingRequirements.find((requirement: any) => !requirement.stepId.includes(':ask-') && !decided.has(requirement.stepId)).stepId;
      };

      let gate = await nextGate();
      expect((await askBody()).status).toBe(201); // 2 stored: the first gate and this request
      const refused = await askBody();
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatchObject({ error: 'limit_reached', details: { limit: 'storedRequirements', max: 2, current: 2 } });
      // Iterations 2 to 4 raise their gates past the cap, and each is decided.
      for (let iteration = 1; iteration <= 4; iteration++) {
        const confirmed = await capped.approve(workflowId, runId, { stepId: gate, resolution: 'confirm' });
        expect(confirmed.status, confirmed.text).toBe(200);
        decided.add(gate);
        if (iteration < 4) gate = await nextGate();
      }
      const done = await capped.waitForRun(workflowId, runId);
      expect(done.status).toBe('completed');
      expect(decided.size).toBe(4);
    } finally {
      await capped.close();
    }
  });
});

describe('concurrent human requests', () => {
  it('never overshoot the open cap: the caps are checked and the request stored in one compare-and-set', { timeout: 60_000 }, async () => {
    const capped = await startService({ env: { SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS: '5' } });
    try {
      const { workflowId, runId } = await capped.startRun({
        name: uniqueName('concurrent'),
        canvas: CANVAS,
        nodes: [echoStep('Gate', {}, { humanReview: { requiresConfirmation: true } })],
      });
      await capped.waitForGate(workflowId, runId);
      const nodeId = await nodeIdOf(capped, workflowId, 'Gate');
      // All 20 requests read the run (0 open requests) before any of them stores its request.
      const read = capped.repos.runs.getInWorkflow.bind(capped.repos.runs);
      const parked: Array<() => void> = [];
      const spy = vi.spyOn(capped.repos.runs, 'getInWorkflow').mockImplementation(async (...args) => {
        const run = await read(...args);
        if (parked.length < 20) {
          await new Promise<void>((resolve) => {
            parked.push(resolve);
            if (parked.length === 20) for (const release of parked) release();
          });
        }
        return run;
      });
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => capped.api.post(runPath(workflowId, runId, '/human-requests'), { nodeId, prompt: `Question ${i}?` })),
      );
      spy.mockRestore();
      expect(parked).toHaveLength(20);
      expect(responses.filter((response) => response.status === 201)).toHaveLength(5);
      for (const refused of responses.filter((response) => response.status !== 201)) {
        expect(refused.status, refused.text).toBe(409);
        expect(['limit_reached', 'conflict']).toContain(refused.body.detail.error);
      }
      const run = (await capped.api.get(runPath(workflowId, runId))).body;
      expect(run.requirements.filter((requirement: any) => requirement.stepId.includes(':ask-'))).toHaveLength(5);
    } finally {
      await capped.close();
    }
  });
});
