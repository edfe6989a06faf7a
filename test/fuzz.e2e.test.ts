/**
 * Fuzzing (issue 9 item 9): property-based tests with fast-check against the real app through
 * `app.inject` (no port), on an embedded in-memory store with the example executor registry
 * (only built-in executors ever run here) and buildApp's defaults (no auth, no rate limits).
 *
 * Generated (test/support/arbitraries.ts): workflow create and validate bodies (from the TypeBox
 * schema, hand-written rule-following node trees, and both mutated), PUT bodies, trigger bodies,
 * approve bodies for a run parked at three real HITL gates, directive bodies, retry / replay /
 * node-rerun / human-request bodies, raw bodies that are not JSON, and query strings and path ids
 * of every list and read endpoint.
 *
 * Every request must keep these promises (checked by {@link send}):
 * - never a 5xx; the process keeps serving (an unhandled rejection or exception fails the file),
 *   nothing is logged at error level, Object.prototype stays untouched;
 * - every answer is JSON in the shape the OpenAPI document declares for its route and status:
 *   4xx as `{ detail: { error, message, ... } }`, 2xx as the route's response schema;
 * - a rejected request (4xx) writes nothing: every collection holds as many documents after it as
 *   before and no document was changed in place (test/support/write-log.ts records the writes of
 *   the repositories); a GET never writes;
 * - what each route promises on success: 201 create returns an id whose GET reads the same,
 *   validate agrees with create, a dry run writes nothing, a decision is stored, a child run names
 *   its parent, list filters and pages keep what they say.
 *
 * Seeded and bounded: each property starts from a fixed seed (FUZZ_SEED=<n> explores others)
 * and runs until its number of cases or its time limit (FUZZ_SCALE=<k> multiplies both), about
 * 20 s in all on 2 cores. On failure fast-check prints the seed, the path and the shrunk
 * counterexample; every assertion message names the request and the answer. FUZZ_STATS=1 prints
 * how many requests each property sent, by status.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc, { type Arbitrary } from 'fast-check';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, loadConfig, openServices, type OpenServices } from '@switchyard/api';
import {
  AllRunsQuery,
  ApprovalListQuery,
  ApproveBody,
  CancelRunBody,
  HumanRequestBody,
  NodeRunListQuery,
  PageQuery,
  RUN_EVENT_TYPES,
  RerunNodeBody,
  RetryRunBody,
  RunEventListQuery,
  RunListQuery,
  TriggerRunBody,
  WorkflowCreateBody,
  WorkflowListQuery,
  WorkflowUpdateBody,
} from '@switchyard/domain';
import { openEmbeddedStore, type DocumentStore, type Repositories } from '@switchyard/store';
import { schemaCompiler, type OpenApiDocument } from '../apps/api/test/openapi-document.ts';
import {
  codePointString,
  deepValue,
  hasPoisoningKey,
  hugeString,
  jsonObject,
  jsonScalar,
  jsonString,
  jsonValue,
  mutated,
  nodeName,
  otherId,
  queryParams,
  queryString,
  schemaArbitrary,
  stepConfig,
  validOrMutated,
  workflowBody,
  workflowNode,
} from './support/arbitraries.ts';
import { CANVAS, EXAMPLE_REGISTRY } from './support/service.ts';
import { recordWrites, type WriteLog } from './support/write-log.ts';

// ---------------------------------------------------------------------------------------------
// Bounds

/** The seed of every property (FUZZ_SEED=<n> to explore others locally; a failure prints the seed and path that replay it). */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20_260_911);
/** Multiplies every property's runs and time limit (FUZZ_SCALE=20 for a long local session). */
const SCALE = Number(process.env['FUZZ_SCALE'] ?? 1);

/** How long one property may run: `numRuns` generated cases after the hand-picked `examples`, for at most `timeLimitMs`. */
interface Bounds<T> {
  numRuns: number;
  timeLimitMs: number;
  examples?: T[];
}

/** A test's timeout: its property's time limit plus room for shrinking a failure. */
function testTimeout(bounds: Bounds<unknown>): number {
  return bounds.timeLimitMs * SCALE + 30_000;
}

/**
 * Checks `predicate` on values of `arbitrary` from the fixed seed within `bounds`. When the time
 * limit comes first the property stops and passes (how many cases fit depends on the machine;
 * their sequence does not). A case still running at that moment is awaited, so that it cannot
 * overlap the next test, and a failure of it fails the test.
 */
async function fuzz<T>(arbitrary: Arbitrary<T>, predicate: (value: T) => Promise<void>, bounds: Bounds<T>): Promise<void> {
  // The examples run first, as they are (fast-check's own `examples` would map them back through the arbitraries, which
  // costs seconds for strings of full Unicode).
  for (const example of bounds.examples ?? []) await predicate(example);
  const running = new Set<Promise<void>>();
  const property = fc.asyncProperty(arbitrary, (value) => {
    const run = predicate(value);
    running.add(run);
    run.then(
      () => running.delete(run),
      () => running.delete(run),
    );
    return run;
  });
  await fc.assert(property, { seed: SEED, numRuns: Math.round(bounds.numRuns * SCALE), plugins: [fc.interruptAfterTimeLimit(bounds.timeLimitMs * SCALE)] });
  // fast-check stops waiting for a case the time limit interrupts, but the case goes on.
  for (const run of [...running]) await run;
}

// ---------------------------------------------------------------------------------------------
// The app, its store, and the checks of every request

const API = '/api/v1';
const HEX24 = /^[0-9a-f]{24}$/i;

let dataDir: string;
let store: DocumentStore;
/** What the app writes (through `repos`): documents per collection and in-place updates. */
let writes: WriteLog;
let repos: Repositories;
let services: OpenServices;
let engine: OpenServices['engine'];
let app: FastifyInstance;
let compile: ReturnType<typeof schemaCompiler>;
let document: OpenApiDocument;
/** Requests sent per test and status (FUZZ_STATS=1 prints them). */
const stats = new Map<string, Map<number, number>>();
let currentTest = '';
/** Every log line at warn or above (errors fail the file in afterAll). */
const logged: Array<{ level: number; msg?: string; err?: unknown }> = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'switchyard-fuzz-'));
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line) as { level: number }) });
  store = await openEmbeddedStore({ dataDir: null });
  writes = await recordWrites(store);
  // The server's composition root on the recorded store. No background work: nothing writes but
  // the runs this file starts (awaited with engine.idle()).
  services = await openServices(loadConfig({ DATA_DIR: dataDir, SWITCHYARD_EXECUTORS: EXAMPLE_REGISTRY }), logger, { store: writes.store, background: false, random: () => 0 });
  ({ repos, engine } = services);
  app = await buildApp({ services, logger, docs: false });
  await app.ready();
  document = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
  compile = schemaCompiler(document);
  await setUpFixtures();
}, 60_000);

beforeEach((context) => {
  currentTest = context.task.name;
});

afterAll(async () => {
  await writes?.verify();
  if (process.env['FUZZ_STATS']) {
    for (const [test, counts] of stats) console.log(`${[...counts.values()].reduce((a, b) => a + b, 0)} requests ${JSON.stringify(Object.fromEntries(counts))}: ${test}`);
  }
  await app?.close();
  await services?.close();
  await store?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  expect(logged.filter((line) => line.level >= 50), 'errors logged while fuzzing').toEqual([]);
});

/** One request, with the OpenAPI `route` it targets (whose declared responses its answer must match). */
interface Request {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The OpenAPI path, e.g. `/api/v1/workflows/{workflow_id}/runs`. */
  route: string;
  url: string;
  /** A JSON body (sent as JSON.stringify text), or `raw` text. */
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  body: any;
}

const validators = new Map<string, (body: unknown) => string | null>();

/** Checks `body` against what the document declares for `status` of `method route`; returns the problem or null. */
function declared(method: string, route: string, status: number, body: unknown): string | null {
  const key = `${method} ${route} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const responses = document.paths[route]?.[method.toLowerCase()]?.responses;
    if (!responses) throw new Error(`the OpenAPI document has no ${method} ${route}`);
    const response = responses[String(status)];
    if (!response) {
      validate = () => `${method} ${route} does not declare ${status}`;
    } else if (!response.content?.['application/json']) {
      validate = (b) => (b === null ? null : `${status} declares no body`);
    } else {
      const pointer = `paths/${route.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
      const compiled = compile(pointer);
      validate = (b) => (compiled(b) ? null : JSON.stringify(compiled.errors).slice(0, 1_000));
    }
    validators.set(key, validate);
  }
  return validate(body);
}

/** Describes a request and its answer for failure messages (bounded: bodies can be MBs). */
function describeCall(request: Request, payload: string | undefined, status: number, text: string): string {
  const sent = payload ?? '';
  const headers = request.headers && Object.keys(request.headers).length > 0 ? ` ${JSON.stringify(request.headers).slice(0, 300)}` : '';
  return `${request.method} ${request.url.slice(0, 300)}${headers} ${sent.slice(0, 600)}${sent.length > 600 ? `... (${sent.length} chars)` : ''} -> ${status} ${text.slice(0, 600)}`;
}

/** Throws (fails the property) with `message()` unless `condition`; the message is built only on failure. */
function check(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new Error(message());
}

/** Sends `request` and checks the promises every answer keeps (see the file comment). */
async function send(request: Request): Promise<Answer> {
  await engine.idle();
  const before = writes.state();
  const payload = request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  const headers: Record<string, string> = { ...request.headers };
  if (payload !== undefined || request.contentType !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
  const response = await app.inject({ method: request.method, url: request.url, headers, ...(payload === undefined ? {} : { payload }) });
  await engine.idle();
  const status = response.statusCode;
  const what = () => describeCall(request, payload, status, response.body);
  const counts = stats.get(currentTest) ?? new Map<number, number>();
  counts.set(status, (counts.get(status) ?? 0) + 1);
  stats.set(currentTest, counts);

  check(status < 500, () => `a 5xx: ${what()}`);
  check(Object.keys(Object.prototype).length === 0, () => `Object.prototype polluted (${Object.keys(Object.prototype).join()}) by ${what()}`);
  let body: any = null;
  if (status !== 204) {
    check(/^application\/json/.test(String(response.headers['content-type'])), () => `not JSON (${response.headers['content-type']}): ${what()}`);
    body = JSON.parse(response.body);
  }
  if (status >= 400) {
    const detail = body?.detail;
    check(
      Object.keys(body ?? {}).join() === 'detail' && typeof detail?.error === 'string' && typeof detail.message === 'string' && detail.message.length > 0,
      () => `not the error format { detail: { error, message } }: ${what()}`,
    );
  }
  // Errors of the router (an unknown route: 404 without `resource`; a path parameter over 100 characters: 414) answer the
  // common error body; everything else what its route declares.
  const beforeRouting = (status === 404 && body?.detail?.resource === undefined && body?.detail?.message?.startsWith('Route ')) || status === 414;
  const problem = beforeRouting ? (errorBodySchema()(body) ? null : JSON.stringify(errorBodySchema().errors)) : declared(request.method, request.route, status, body);
  check(problem === null, () => `not what the OpenAPI document declares (${problem}): ${what()}`);
  if (status >= 400 || request.method === 'GET') {
    const after = writes.state();
    check(JSON.stringify(after) === JSON.stringify(before), () => `${status >= 400 ? 'a rejection' : 'a GET'} wrote to the store (${JSON.stringify(before)} -> ${JSON.stringify(after)}): ${what()}`);
  }
  return { status, body };
}

let errorBodyValidator: ReturnType<typeof compile> | undefined;
function errorBodySchema(): ReturnType<typeof compile> {
  return (errorBodyValidator ??= compile('components/schemas/ErrorBody'));
}

// ---------------------------------------------------------------------------------------------
// Fixtures: a workflow whose runs park at three real HITL gates, and runs in every state

/**
 * The gate workflow: a parallel of a step with a confirmation form (gate `form`), a step with an
 * output review (gate `review:review`) and a router whose route a person picks (gate `route`,
 * several choices allowed). A rejection skips (the run goes on).
 */
const GATES_WORKFLOW = {
  name: 'fuzz gates',
  canvas: CANVAS,
  tags: ['fuzz', 'team:hitl'],
  nodes: [
    {
      id: 'gates',
      name: 'Gates',
      nodeType: 'parallel',
      children: [
        {
          id: 'form',
          name: 'Form',
          nodeType: 'step',
          executorKey: 'echo',
          config: { seen: { $cel: 'input' }, answer: { $cel: 'user_input' } },
          humanReview: {
            requiresConfirmation: true,
            requiresUserInput: true,
            userInputSchema: [
              { name: 'reason', fieldType: 'string', required: false },
              { name: 'count', fieldType: 'number', required: false, allowedValues: [1, 2, 3] },
              { name: 'flags', fieldType: 'array', required: false },
              { name: 'ok', fieldType: 'boolean', required: false, defaultValue: true },
            ],
            onReject: 'skip',
          },
        },
        { id: 'review', name: 'Review', nodeType: 'step', executorKey: 'echo', config: { text: 'hello' }, humanReview: { requiresOutputReview: true, onReject: 'skip' } },
        {
          id: 'route',
          name: 'Route',
          nodeType: 'router',
          humanReview: { requiresUserInput: true, allowMultipleSelections: true },
          choices: [
            { name: 'a', steps: [{ id: 'ra', name: 'RA', nodeType: 'step', executorKey: 'echo', config: { route: 'a' } }] },
            { name: 'b', steps: [{ id: 'rb', name: 'RB', nodeType: 'step', executorKey: 'echo', config: { route: 'b' } }] },
          ],
        },
      ],
    },
  ],
};
const GATE_STEP_IDS = ['form', 'review:review', 'route'] as const;
const NODE_IDS = ['gates', 'form', 'review', 'route', 'ra', 'rb'] as const;

/** Ids the arbitraries pick from; filled by {@link setUpFixtures}. */
const fx = {
  gatesWorkflow: '',
  plainWorkflow: '',
  disabledWorkflow: '',
  putWorkflow: '',
  /** A completed run of the gate workflow (every gate decided) and its node runs. */
  completedRun: '',
  completedNodeRuns: [] as Array<{ id: string; nodeId: string }>,
  cancelledRun: '',
  /** Starts paused; fuzzed directives may move it. */
  otherRun: '',
  /** A run of the plain workflow (a step, no gates), completed. */
  plainRun: '',
  /** The current run parked at undecided gates ({@link gatedRun}). */
  gated: '',
};

async function json(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<any> {
  const response = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body as Record<string, unknown> }) });
  await engine.idle();
  if (response.statusCode >= 300) throw new Error(`${method} ${url} -> ${response.statusCode} ${response.body}`);
  return response.statusCode === 204 ? null : response.json();
}

async function createEnabled(body: Record<string, unknown>): Promise<string> {
  const created = await json('POST', `${API}/workflows`, body);
  await json('POST', `${API}/workflows/${created.id}/toggle`, { enabled: true });
  return created.id as string;
}

/** A new run of the gate workflow, parked at its three gates. */
async function newGatedRun(): Promise<string> {
  const { runId } = await json('POST', `${API}/workflows/${fx.gatesWorkflow}/runs`, { initialInput: { n: 1 } });
  const run = await repos.runs.get(runId);
  const undecided = run?.pendingRequirements.filter((r) => r.decidedAt === null).map((r) => r.stepId).sort();
  if (run?.status !== 'awaiting_approval' || JSON.stringify(undecided) !== JSON.stringify([...GATE_STEP_IDS].sort())) {
    throw new Error(`the gate workflow did not park at its gates: ${run?.status} ${JSON.stringify(undecided)}`);
  }
  return runId as string;
}

/** The run approvals aim at: the current one while it has an undecided gate and is awaiting approval, else a new one. */
async function gatedRun(): Promise<string> {
  const run = fx.gated ? await repos.runs.get(fx.gated) : null;
  if (run?.status === 'awaiting_approval' && run.pendingRequirements.some((r) => r.decidedAt === null)) return fx.gated;
  fx.gated = await newGatedRun();
  return fx.gated;
}

async function setUpFixtures(): Promise<void> {
  fx.gatesWorkflow = await createEnabled(GATES_WORKFLOW);
  fx.plainWorkflow = await createEnabled({ name: 'fuzz plain', canvas: CANVAS, tags: ['fuzz'], nodes: [{ id: 'only', name: 'Only', nodeType: 'step', executorKey: 'echo', config: { x: 1 } }] });
  fx.disabledWorkflow = (await json('POST', `${API}/workflows`, { name: 'fuzz disabled', canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'echo' }] })).id;
  fx.putWorkflow = (await json('POST', `${API}/workflows`, { name: 'fuzz put target', canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'echo' }] })).id;

  // A completed gate run: every gate decided with the resolution it allows.
  const completed = await newGatedRun();
  const approve = (body: Record<string, unknown>) => json('POST', `${API}/workflows/${fx.gatesWorkflow}/runs/${completed}/approve`, body);
  await approve({ stepId: 'form', resolution: 'user_input', userInput: { reason: 'r', count: 2, flags: ['x'] } });
  await approve({ stepId: 'route', resolution: 'route_select', selectedChoices: ['a', 'b'] });
  const run = await repos.runs.get(completed);
  if (!run?.pendingRequirements.some((r) => r.stepId === 'review:review' && r.decidedAt === null)) throw new Error('no output review gate after the others');
  await approve({ stepId: 'review:review', resolution: 'edit', editedOutput: { edited: true } });
  const done = await repos.runs.get(completed);
  if (done?.status !== 'completed') throw new Error(`the gate run did not complete: ${done?.status} ${done?.errorSummary}`);
  fx.completedRun = completed;
  fx.completedNodeRuns = (await json('GET', `${API}/workflows/${fx.gatesWorkflow}/runs/${completed}/nodes`)).nodeRuns.map((n: { id: string; nodeId: string }) => ({ id: n.id, nodeId: n.nodeId }));

  fx.cancelledRun = await newGatedRun();
  await json('POST', `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.cancelledRun}/cancel`, { reason: 'fixture' });
  fx.otherRun = await newGatedRun();
  await json('POST', `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.otherRun}/pause`);
  fx.plainRun = (await json('POST', `${API}/workflows/${fx.plainWorkflow}/runs`, {})).runId;
  fx.gated = await newGatedRun();
}

// ---------------------------------------------------------------------------------------------
// Shared arbitraries over the fixtures

/**
 * Replaces the symbolic ids of generated text (fixtures change from run to run; counterexamples
 * stay readable): `@gates` `@plain` (workflows), `@completed` `@cancelled` `@gated` `@other` `@plain-run`
 * (runs), `@node-run` (a node run of the completed run, the `pick`-th) and `@node-run:<nodeId>`
 * (that node's), also percent-encoded (`%40`).
 */
function resolveSymbols(text: string, pick = 0): string {
  const runs: Record<string, () => string> = { completed: () => fx.completedRun, cancelled: () => fx.cancelledRun, gated: () => fx.gated, other: () => fx.otherRun, 'plain-run': () => fx.plainRun };
  return text
    .replace(/(?:%40|@)node-run(?::([A-Za-z0-9_.-]+))?/g, (_m, nodeId?: string) =>
      nodeId ? (fx.completedNodeRuns.find((n) => n.nodeId === nodeId)?.id ?? 'none') : fx.completedNodeRuns[pick % fx.completedNodeRuns.length]!.id,
    )
    .replace(/(?:%40|@)(completed|cancelled|gated|other|plain-run)\b/g, (_m, name: string) => runs[name]!())
    .replace(/(?:%40|@)gates\b/g, () => fx.gatesWorkflow)
    .replace(/(?:%40|@)plain\b/g, () => fx.plainWorkflow);
}

/** `value` with its symbolic ids replaced (see {@link resolveSymbols}). */
function resolveValue(value: unknown, pick = 0): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(resolveSymbols(text, pick));
}

const hex24 = fc.stringMatching(/^[0-9a-f]{24}$/);

/** Which run a request names: resolved at run time (the gated run changes as gates are decided). */
type RunTarget = 'gated' | 'other' | 'completed' | 'cancelled' | 'plain' | { id: string };
const runTarget: Arbitrary<RunTarget> = fc.oneof(
  { arbitrary: fc.constant<RunTarget>('gated'), weight: 10 },
  { arbitrary: fc.constantFrom<RunTarget>('other', 'completed', 'cancelled', 'plain'), weight: 3 },
  { arbitrary: otherId().map((id): RunTarget => ({ id })), weight: 1 },
);

async function resolveRun(target: RunTarget): Promise<{ workflowId: string; runId: string }> {
  if (typeof target === 'object') return { workflowId: fx.gatesWorkflow, runId: target.id };
  switch (target) {
    case 'gated':
      return { workflowId: fx.gatesWorkflow, runId: await gatedRun() };
    case 'other':
      return { workflowId: fx.gatesWorkflow, runId: fx.otherRun };
    case 'completed':
      return { workflowId: fx.gatesWorkflow, runId: fx.completedRun };
    case 'cancelled':
      return { workflowId: fx.gatesWorkflow, runId: fx.cancelledRun };
    case 'plain':
      return { workflowId: fx.plainWorkflow, runId: fx.plainRun };
  }
}

/** Printable ASCII header values (what an HTTP client can send), odd and long ones included. */
const headerValue = fc.oneof(
  fc.string({ maxLength: 40, unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  fc.constantFrom('', ' ', 'x'.repeat(300), '__proto__', 'a,b,,c', 'null'),
);

/** Optional identity headers (x-switchyard-*), as a proxy in front would set them. */
const identityHeaders: Arbitrary<Record<string, string>> = fc.record(
  { 'x-switchyard-user-id': headerValue, 'x-switchyard-username': headerValue, 'x-switchyard-scopes': headerValue },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------------------------
// Properties

describe('fuzzing workflow definitions', () => {
  /** Node and body overrides: executor keys, CEL and ids that the schema alone would almost never get right. */
  const schemaNodeOverrides = () => ({
    executorKey: fc.option(fc.constantFrom('echo', 'flaky', 'nope'), { nil: undefined }),
    conditionCel: fc.option(fc.constantFrom('true', 'input.x > 1', '1 +', 'step_choices[0]'), { nil: undefined }),
    endConditionCel: fc.option(fc.constantFrom('loop_state.iteration >= 2', 'nope('), { nil: undefined }),
    id: fc.option(fc.stringMatching(/^[a-z0-9]{1,6}$/), { nil: undefined }),
    config: fc.option(stepConfig(true), { nil: undefined }),
    a2aPool: fc.option(fc.array(fc.constantFrom('echo', 'flaky', 'nope'), { maxLength: 6 }), { nil: undefined }),
    tags: fc.array(fc.stringMatching(/^[A-Za-z0-9 _.:/-]{1,20}$/), { maxLength: 21 }),
    name: nodeName(),
  });

  /** Create bodies: from the schema, rule-following trees (plain and hostile), mutations of both, and hostile wholes. */
  const createBodies = (): Arbitrary<unknown> => {
    const fromSchema = schemaArbitrary(WorkflowCreateBody, { overrides: schemaNodeOverrides(), maxRefDepth: 3 });
    const trees = workflowBody();
    return fc.oneof(
      { arbitrary: fromSchema, weight: 2 },
      { arbitrary: trees, weight: 4 },
      { arbitrary: workflowBody({ hostile: true }), weight: 2 },
      { arbitrary: mutated(fc.oneof(fromSchema, trees)), weight: 3 },
      {
        arbitrary: fc.oneof(
          jsonValue({ maxDepth: 3, hostile: true }),
          fc.record({ name: jsonString(), canvas: fc.constant(CANVAS), nodes: fc.array(jsonValue({ hostile: true }), { maxLength: 3 }) }),
          fc.record({ name: jsonString(), canvas: fc.constant(CANVAS), nodes: deepValue().map((v) => [v]) }),
          fc.record({ name: hugeString(), canvas: fc.constant(CANVAS), nodes: fc.constant([{ name: 'A', nodeType: 'step', executorKey: 'echo' }]) }),
          // Around the nesting limit (20) and the node limit (500).
          fc.integer({ min: 19, max: 24 }).map((depth) => {
            let node: Record<string, unknown> = { name: 'leaf', nodeType: 'step', executorKey: 'echo' };
            for (let i = 0; i < depth; i++) node = { name: `c${i}`, nodeType: 'condition', conditionCel: 'true', trueSteps: [node] };
            return { name: `deep ${depth}`, canvas: CANVAS, nodes: [node] };
          }),
          fc.integer({ min: 490, max: 510 }).map((n) => ({
            name: `wide ${n}`,
            canvas: CANVAS,
            nodes: Array.from({ length: n }, (_, i) => ({ name: `s${i}`, nodeType: 'step', executorKey: 'echo' })),
          })),
        ),
        weight: 1,
      },
    );
  };

  const createBounds: Bounds<unknown> = { numRuns: 1_000, timeLimitMs: 4_000 };
  it(
    'POST /workflows/validate and POST /workflows agree, never fail, and save only what they accept',
    async () => {
      let saved = 0;
      let refused = 0;
      await fuzz(
        createBodies(),
        async (body) => {
          const validated = await send({ method: 'POST', route: `${API}/workflows/validate`, url: `${API}/workflows/validate`, body });
          const created = await send({ method: 'POST', route: `${API}/workflows`, url: `${API}/workflows`, body });
          if (hasPoisoningKey(body)) {
            // Refused by the body guard (which may first find another of its problems, e.g. a lone surrogate).
            expect(created.status).toBe(400);
            expect(created.body.detail.message).toMatch(/__proto__|prototype|well-formed Unicode|nests deeper/);
          }
          if (validated.status === 200) {
            // Validate checks what create checks, except the name's uniqueness.
            if (validated.body.valid) expect([201, 409], JSON.stringify(created.body)).toContain(created.status);
            else {
              expect(created.status, JSON.stringify(validated.body)).toBe(400);
              expect(validated.body.problems.length).toBeGreaterThan(0);
            }
          } else {
            // Refused before the definition checks (schema, body guard, size): create refuses it the same way.
            expect(created.status).toBe(validated.status);
            expect(created.body.detail.error).toBe(validated.body.detail.error);
          }
          if (created.status !== 201) {
            refused += 1;
            return;
          }
          saved += 1;
          const sent = body as { name: string; nodes: unknown[] };
          expect(created.body.id).toMatch(HEX24);
          expect(created.body).toMatchObject({ name: sent.name, enabled: false, version: 1 });
          expect(created.body.nodes).toHaveLength(sent.nodes.length);
          // What was saved reads back the same (not for every one: reading a large tree costs as much as saving it).
          if (saved <= 20 || saved % 8 === 0) {
            const read = await send({ method: 'GET', route: `${API}/workflows/{workflow_id}`, url: `${API}/workflows/${created.body.id}` });
            expect(read.body).toEqual(created.body);
          }
        },
        createBounds,
      );
      // The generators must reach both sides, or the property proves little.
      const total = saved + refused;
      expect(saved / total, `saved ${saved} of ${total}`).toBeGreaterThan(0.15);
      expect(refused / total, `refused ${refused} of ${total}`).toBeGreaterThan(0.15);
    },
    testTimeout(createBounds),
  );

  const putBounds: Bounds<[string, unknown]> = { numRuns: 400, timeLimitMs: 1_500, examples: [['put', {}], ['put', { tags: ['a', 'a'], enabled: true }]] };
  it(
    'PUT /workflows/{id} never fails and changes nothing when it refuses',
    async () => {
      const updates = validOrMutated(
        schemaArbitrary(WorkflowUpdateBody, {
          outOfRange: true,
          overrides: {
            ...schemaNodeOverrides(),
            nodes: fc.array(workflowNode({ maxDepth: 2, hostile: true }), { minLength: 1, maxLength: 2 }),
            name: fc.oneof(nodeName(), fc.constantFrom('fuzz gates', 'fuzz plain')),
          },
        }),
      );
      const target = fc.oneof({ arbitrary: fc.constant('put'), weight: 8 }, { arbitrary: otherId(), weight: 1 });
      await fuzz(
        fc.tuple(target, updates),
        async ([which, body]) => {
          const id = which === 'put' ? fx.putWorkflow : which;
          const before = HEX24.test(id) ? await repos.definitions.get(id) : null;
          const answer = await send({ method: 'PUT', route: `${API}/workflows/{workflow_id}`, url: `${API}/workflows/${id}`, body });
          if (answer.status === 200) {
            expect(answer.body.id).toBe(id);
            expect(answer.body.version).toBeGreaterThanOrEqual(before!.version);
            expect(answer.body).toEqual((await send({ method: 'GET', route: `${API}/workflows/{workflow_id}`, url: `${API}/workflows/${id}` })).body);
          }
        },
        putBounds,
      );
    },
    testTimeout(putBounds),
  );
});

describe('fuzzing triggers, approvals and directives', () => {
  type TriggerCase = [workflow: string, body: unknown, idempotencyKey: string | null, pick: number];
  const triggerBounds: Bounds<TriggerCase> = {
    numRuns: 800,
    timeLimitMs: 2_500,
    examples: [
      ['gates', {}, null, 0],
      ['gates', { dryRun: true, initialInput: { a: 1 } }, null, 0],
      ['gates', { triggerSource: 'fuzz', initialInput: { constructor: 1, $where: 'x', 'a.b': [] }, parallelLimit: 1, timeoutSeconds: 3600 }, 'key-1', 0],
      ['gates', { parentRunId: '@completed', resolvedDependencies: [{ nodeId: 'form', resolution: 'reuse_previous_output', sourceNodeRunId: '@node-run:form' }] }, null, 0],
      ['disabled', { dryRun: true }, null, 0],
    ],
  };
  it(
    'POST .../runs: a trigger starts a run, a dry run starts nothing, anything else is a clean 4xx',
    async () => {
      const body = validOrMutated(
        schemaArbitrary(TriggerRunBody, {
          outOfRange: true,
          overrides: {
            initialInput: fc.oneof(
              { arbitrary: jsonObject({ maxDepth: 4 }), weight: 6 },
              { arbitrary: fc.constant(null), weight: 1 },
              { arbitrary: deepValue().map((v) => ({ deep: v })), weight: 1 },
              { arbitrary: hugeString().map((s) => ({ s })), weight: 1 },
            ),
            parentRunId: fc.oneof(fc.constantFrom('@completed', '@cancelled', '@gated', '@plain-run'), hex24, fc.constant(null), jsonString()),
            resolvedDependencies: fc.option(
              fc.array(
                fc.record(
                  {
                    nodeId: fc.oneof(fc.constantFrom(...NODE_IDS), jsonString()),
                    resolution: fc.constantFrom('reuse_previous_output', 'rerun'),
                    sourceNodeRunId: fc.option(fc.oneof(fc.constant('@node-run'), fc.constantFrom(...NODE_IDS).map((id) => `@node-run:${id}`), hex24, jsonString())),
                  },
                  { requiredKeys: ['nodeId', 'resolution'] },
                ),
                { maxLength: 4 },
              ),
            ),
            triggerSource: fc.oneof(fc.string({ minLength: 1, maxLength: 100 }), fc.constantFrom('manual', 'retry', 'replay', 'node_rerun', 'x'.repeat(101))),
          },
        }),
      );
      const workflow = fc.oneof({ arbitrary: fc.constant('gates'), weight: 8 }, { arbitrary: fc.constantFrom('plain', 'disabled'), weight: 2 }, { arbitrary: otherId(), weight: 1 });
      const idempotencyKey = fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: fc.oneof(headerValue, fc.constant('k'.repeat(256))), weight: 1 });
      let started = 0;
      await fuzz(
        fc.tuple(workflow, body, idempotencyKey, fc.nat()),
        async ([which, raw, key, pick]) => {
          const workflowId = which === 'gates' ? fx.gatesWorkflow : which === 'plain' ? fx.plainWorkflow : which === 'disabled' ? fx.disabledWorkflow : which;
          const sent = resolveValue(raw, pick);
          const answer = await send({
            method: 'POST',
            route: `${API}/workflows/{workflow_id}/runs`,
            url: `${API}/workflows/${workflowId}/runs`,
            body: sent,
            ...(key === null ? {} : { headers: { 'idempotency-key': key } }),
          });
          if (answer.status === 202) {
            started += 1;
            const run = await repos.runs.get(answer.body.runId);
            expect(run?.workflowDefinitionId).toBe(workflowId);
            expect(answer.body.workflowDefinitionId).toBe(workflowId);
            const source = (sent as { triggerSource?: unknown } | undefined)?.triggerSource;
            expect(answer.body.triggerSource).toBe(typeof source === 'string' ? source : 'manual');
          }
          if (answer.status === 200) {
            // Only a dry run answers 200, and it wrote nothing (checked like a rejection).
            expect(answer.body).toMatchObject({ dryRun: true, workflowId });
            expect((sent as { dryRun?: unknown }).dryRun).toBe(true);
          }
        },
        triggerBounds,
      );
      expect(started).toBeGreaterThanOrEqual(3);
    },
    testTimeout(triggerBounds),
  );

  type ApproveCase = [target: RunTarget, body: unknown, headers: Record<string, string>];
  const approveBounds: Bounds<ApproveCase> = {
    numRuns: 1_000,
    timeLimitMs: 2_500,
    // Every resolution once with a payload its gate accepts (the generated cases find them too, but not in a guaranteed number).
    examples: [
      ['gated', { stepId: 'form', resolution: 'user_input', userInput: { reason: 'x', count: 2 } }, {}],
      ['gated', { stepId: 'route', resolution: 'route_select', selectedChoices: ['b'] }, { 'x-switchyard-username': 'fuzz' }],
      ['gated', { stepId: 'review:review', resolution: 'edit', editedOutput: { edited: [1, 2] } }, {}],
      ['gated', { stepId: 'form', resolution: 'confirm' }, {}],
      ['gated', { stepId: 'review:review', resolution: 'reject', feedback: 'no' }, {}],
    ],
  };
  it(
    'POST .../approve: every resolution with random payloads decides a real gate or is a clean 4xx that changes nothing',
    async () => {
      // The form's fields: reason (string), count (number, 1-3), flags (array), ok (boolean); mostly right, sometimes not.
      const field = <T,>(good: Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 5 }, { arbitrary: jsonScalar(), weight: 1 });
      const userInput = fc.oneof(
        {
          arbitrary: fc.record({ reason: field(fc.string()), count: field(fc.constantFrom(1, 2, 3, 4)), flags: field(fc.array(jsonValue({ maxDepth: 1 }), { maxLength: 3 })), ok: field(fc.boolean()) }, { requiredKeys: [] }),
          weight: 4,
        },
        { arbitrary: fc.tuple(fc.record({ reason: fc.string() }, { requiredKeys: [] }), jsonObject()).map(([known, extra]) => ({ ...extra, ...known })), weight: 1 },
        { arbitrary: fc.constant(null), weight: 1 },
      );
      const body = validOrMutated(
        schemaArbitrary(ApproveBody, {
          outOfRange: true,
          overrides: {
            stepId: fc.oneof(
              { arbitrary: fc.constantFrom(...GATE_STEP_IDS), weight: 8 },
              { arbitrary: fc.constantFrom('gates', 'ra', 'form:review', 'route:review', 'review', 'FORM', 'form ', '__proto__', 'constructor', 'x'.repeat(10_000)), weight: 2 },
              { arbitrary: jsonString(), weight: 1 },
            ),
            editedOutput: fc.oneof({ arbitrary: jsonValue({ maxDepth: 4 }), weight: 5 }, { arbitrary: deepValue(), weight: 1 }),
            userInput,
            selectedChoices: fc.option(fc.oneof(fc.subarray(['a', 'b', 'c', '', 'A', 'a ']), fc.array(jsonString(), { maxLength: 3 }))),
            feedback: fc.option(fc.oneof(fc.string(), fc.constant('f'.repeat(10_000)), fc.constant('f'.repeat(10_001)))),
          },
        }),
      );
      const decided = new Set<string>();
      await fuzz(
        fc.tuple(runTarget, body, identityHeaders),
        async ([target, sent, headers]) => {
          const { workflowId, runId } = await resolveRun(target);
          const answer = await send({ method: 'POST', route: `${API}/workflows/{workflow_id}/runs/{run_id}/approve`, url: `${API}/workflows/${workflowId}/runs/${runId}/approve`, body: sent, headers });
          if (answer.status === 200) {
            const { stepId, resolution } = sent as { stepId: string; resolution: string };
            decided.add(resolution);
            expect(answer.body).toMatchObject({ runId, resolvedStepId: stepId });
            const run = await repos.runs.get(runId);
            const requirement = run!.pendingRequirements.filter((r) => r.stepId === stepId).at(-1);
            expect(requirement?.decidedAt, `the decision on ${stepId} is stored`).not.toBeNull();
          }
        },
        approveBounds,
      );
      // Every resolution had a gate it fits.
      expect([...decided].sort()).toEqual(['confirm', 'edit', 'reject', 'route_select', 'user_input']);
    },
    testTimeout(approveBounds),
  );

  type DirectiveCase = [directive: 'pause' | 'resume' | 'cancel', target: RunTarget, cancelBody: unknown, otherBody: unknown, headers: Record<string, string>];
  const directiveBounds: Bounds<DirectiveCase> = { numRuns: 600, timeLimitMs: 1_500 };
  it(
    'POST .../pause | resume | cancel: a directive answers for its run or is a clean 4xx that changes nothing',
    async () => {
      const cancelBody = fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 1 },
        { arbitrary: validOrMutated(schemaArbitrary(CancelRunBody, { outOfRange: true, overrides: { reason: fc.option(fc.oneof(fc.string(), fc.constantFrom('r'.repeat(2_000), 'r'.repeat(2_001)))) } })), weight: 3 },
      );
      // pause and resume read no body: any JSON passes.
      const otherBody = fc.oneof({ arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: fc.oneof(jsonValue({ hostile: true }), fc.constant({})), weight: 1 });
      await fuzz(
        fc.tuple(fc.constantFrom('pause' as const, 'resume' as const, 'cancel' as const), runTarget, cancelBody, otherBody, identityHeaders),
        async ([which, target, forCancel, other, headers]) => {
          const { workflowId, runId } = await resolveRun(target);
          const answer = await send({
            method: 'POST',
            route: `${API}/workflows/{workflow_id}/runs/{run_id}/${which}`,
            url: `${API}/workflows/${workflowId}/runs/${runId}/${which}`,
            body: which === 'cancel' ? forCancel : other,
            headers,
          });
          if (answer.status === 200) {
            expect(answer.body.runId).toBe(runId);
            const run = await repos.runs.get(runId);
            if (which === 'cancel') expect(run?.status).toMatch(/^(cancelled|completed|failed)$/);
            if (which === 'pause' && answer.body.changed) expect(run?.status).toBe('paused');
          }
        },
        directiveBounds,
      );
    },
    testTimeout(directiveBounds),
  );

  type ControlCase = [action: 'retry' | 'replay' | 'rerun' | 'human-requests', target: RunTarget, nodeId: string, body: unknown];
  const controlBounds: Bounds<ControlCase> = {
    numRuns: 400,
    timeLimitMs: 1_500,
    examples: [
      ['retry', 'completed', 'form', undefined],
      ['retry', 'cancelled', 'form', { initialInput: { n: 2 }, resolvedDependencies: [{ nodeId: 'review', resolution: 'rerun' }] }],
      ['replay', 'completed', 'form', {}],
      ['rerun', 'completed', 'ra', { iterationPath: '' }],
      ['human-requests', 'gated', 'review', { nodeId: 'review', prompt: 'Which one?', choices: ['a', 'b'], timeoutSeconds: 60 }],
    ],
  };
  it(
    'POST .../retry | replay | nodes/{id}/rerun | human-requests: a child run or a request for a real run, or a clean 4xx that changes nothing',
    async () => {
      const dependencies = fc.option(
        fc.array(
          fc.record(
            {
              nodeId: fc.oneof(fc.constantFrom(...NODE_IDS), jsonString()),
              resolution: fc.constantFrom('reuse_previous_output', 'rerun'),
              sourceNodeRunId: fc.option(fc.oneof(fc.constantFrom(...NODE_IDS).map((id) => `@node-run:${id}`), hex24)),
            },
            { requiredKeys: ['nodeId', 'resolution'] },
          ),
          { maxLength: 3 },
        ),
      );
      const retryBody = validOrMutated(schemaArbitrary(RetryRunBody, { outOfRange: true, overrides: { resolvedDependencies: dependencies, initialInput: fc.option(jsonObject()) } }));
      const rerunBody = validOrMutated(schemaArbitrary(RerunNodeBody, { outOfRange: true, overrides: { iterationPath: fc.option(fc.oneof(fc.constantFrom('', '1', '2/1', '3r1', 'x'.repeat(513)), jsonString())) } }));
      const humanBody = validOrMutated(
        schemaArbitrary(HumanRequestBody, {
          outOfRange: true,
          overrides: {
            nodeId: fc.oneof(fc.constantFrom(...NODE_IDS), fc.stringMatching(/^[a-z]{1,8}$/)),
            iterationPath: fc.constantFrom('', '1', 'x'.repeat(513)),
            prompt: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constantFrom('p'.repeat(4_000), 'p'.repeat(4_001))),
            choices: fc.option(fc.oneof(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }), fc.constant(['a', 'a']), fc.constant([]))),
          },
        }),
      );
      const action = fc.constantFrom('retry' as const, 'replay' as const, 'rerun' as const, 'human-requests' as const);
      const nodeId = fc.oneof({ arbitrary: fc.constantFrom(...NODE_IDS), weight: 6 }, { arbitrary: fc.constantFrom('nope', 'x'.repeat(129), 'a b', '__proto__'), weight: 1 });
      const body = fc.oneof({ arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: fc.oneof(retryBody, rerunBody, humanBody), weight: 4 });
      await fuzz(
        fc.tuple(action, runTarget, nodeId, body),
        async ([which, target, node, raw]) => {
          const { workflowId, runId } = await resolveRun(target);
          const sent = resolveValue(raw);
          const path = which === 'rerun' ? `nodes/${encodeURIComponent(node)}/rerun` : which;
          const route = which === 'rerun' ? `${API}/workflows/{workflow_id}/runs/{run_id}/nodes/{node_id}/rerun` : `${API}/workflows/{workflow_id}/runs/{run_id}/${which}`;
          const answer = await send({ method: 'POST', route, url: `${API}/workflows/${workflowId}/runs/${runId}/${path}`, body: sent });
          if (answer.status === 202) {
            expect(answer.body).toMatchObject({ parentRunId: runId, triggerSource: which === 'rerun' ? 'node_rerun' : which });
            expect(answer.body.run_id).toBe(answer.body.runId);
            expect((await repos.runs.get(answer.body.runId))?.parentRunId).toBe(runId);
          }
          if (answer.status === 201) {
            expect(which).toBe('human-requests');
            expect(answer.body).toMatchObject({ runId, workflowId, nodeId: (sent as { nodeId: string }).nodeId, status: 'pending' });
            const read = await send({
              method: 'GET',
              route: `${API}/workflows/{workflow_id}/runs/{run_id}/human-requests/{request_id}`,
              url: `${API}/workflows/${workflowId}/runs/${runId}/human-requests/${encodeURIComponent(answer.body.requestId)}`,
            });
            expect(read.body).toEqual(answer.body);
          }
        },
        controlBounds,
      );
    },
    testTimeout(controlBounds),
  );

  /** Body routes, and the URL each is sent to. */
  const BODY_ROUTES: Record<string, { method?: 'PUT'; url: () => string }> = {
    [`${API}/workflows`]: { url: () => `${API}/workflows` },
    [`${API}/workflows/validate`]: { url: () => `${API}/workflows/validate` },
    [`${API}/workflows/{workflow_id}`]: { method: 'PUT', url: () => `${API}/workflows/${fx.putWorkflow}` },
    [`${API}/workflows/{workflow_id}/toggle`]: { url: () => `${API}/workflows/${fx.disabledWorkflow}/toggle` },
    [`${API}/workflows/{workflow_id}/runs`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs` },
    [`${API}/workflows/{workflow_id}/runs/{run_id}/approve`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.gated}/approve` },
    [`${API}/workflows/{workflow_id}/runs/{run_id}/cancel`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.completedRun}/cancel` },
    [`${API}/workflows/{workflow_id}/runs/{run_id}/retry`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.gated}/retry` },
    [`${API}/workflows/{workflow_id}/runs/{run_id}/replay`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.cancelledRun}/replay` },
    [`${API}/workflows/{workflow_id}/runs/{run_id}/human-requests`]: { url: () => `${API}/workflows/${fx.gatesWorkflow}/runs/${fx.completedRun}/human-requests` },
  };
  const rawBounds: Bounds<[string, string, string]> = { numRuns: 600, timeLimitMs: 1_000 };
  it(
    'raw bodies that are not JSON, or not what a route reads, are clean 4xx on every body route',
    async () => {
      const raw = fc.oneof(
        fc.string({ maxLength: 40 }),
        codePointString(20),
        fc.constantFrom('', ' ', '{', '{"a":', '[1,2', 'null', 'true', '0', '"x"', '[]', '{}', '{"a":1}{"b":2}', '\ufeff{}', '{"a":1,}', "{'a':1}", 'NaN', '1e99999', '{"a":"\\ud800"}', '{"__proto__":{}}', '\u0000'),
        jsonValue({ hostile: true }).map((v) => JSON.stringify(v) ?? ''),
        fc.integer({ min: 130, max: 5_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
      );
      const contentType = fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/JSON',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json-patch+json',
        '',
      );
      await fuzz(
        fc.tuple(fc.constantFrom(...Object.keys(BODY_ROUTES)), raw, contentType),
        async ([route, text, type]) => {
          const target = BODY_ROUTES[route]!;
          await send({ method: target.method ?? 'POST', route, url: target.url(), raw: text, contentType: type });
        },
        rawBounds,
      );
    },
    testTimeout(rawBounds),
  );
});

describe('fuzzing runs of generated definitions', () => {
  /** Inputs the generated CEL reads (`input.x`, `input.l`, ...), or anything. */
  const initialInput = fc.oneof(
    { arbitrary: fc.record({ x: jsonScalar(), l: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 5 }), n: jsonScalar(), a: fc.constantFrom('b', 'c'), route: jsonString() }, { requiredKeys: [] }), weight: 3 },
    { arbitrary: jsonObject({ maxDepth: 4 }), weight: 2 },
  );

  /**
   * How to decide a gate the run stops at, whatever it is: which undecided gate (`pick`), the
   * resolution (which may not fit the gate: a 400), and the material of its payload. Turned into
   * an approve body by {@link decisionFor} once the gate is known.
   */
  interface Decision {
    pick: number;
    /** Use a resolution the gate accepts (picked by `pick`) instead of `resolution`. */
    fit: boolean;
    resolution: 'confirm' | 'reject' | 'edit' | 'user_input' | 'route_select';
    value: unknown;
    feedback: string | null;
    choices: number[];
  }
  const decision: Arbitrary<Decision> = fc.record({
    pick: fc.nat(),
    fit: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
    resolution: fc.constantFrom('confirm', 'reject', 'edit', 'user_input', 'route_select'),
    value: jsonValue({ maxDepth: 2 }),
    feedback: fc.option(fc.string({ maxLength: 20 })),
    choices: fc.array(fc.nat(), { maxLength: 3 }),
  });

  /** A value of a form field's runtime type (str, int, float, bool, list, dict), an allowed one when the field lists them. */
  function fieldValue(field: { fieldType?: string; allowedValues?: unknown[] | null }, seed: unknown): unknown {
    if (field.allowedValues && field.allowedValues.length > 0) return field.allowedValues[0];
    switch (field.fieldType) {
      case 'str':
        return typeof seed === 'string' ? seed : JSON.stringify(seed) ?? '';
      case 'int':
      case 'float':
        return typeof seed === 'number' && Number.isInteger(seed) ? seed : 1;
      case 'bool':
        return typeof seed === 'boolean' ? seed : true;
      case 'list':
        return Array.isArray(seed) ? seed : [seed];
      default:
        return seed !== null && typeof seed === 'object' && !Array.isArray(seed) ? seed : {};
    }
  }

  /** The approve body `plan` makes for `requirement` (a StepRequirementSummary of the run detail). */
  function decisionFor(requirement: any, plan: Decision): Record<string, unknown> {
    const fitting: Decision['resolution'][] = requirement.requiresRouteSelection
      ? ['route_select', 'reject']
      : [
          'confirm',
          'reject',
          ...(requirement.requiresUserInput ? (['user_input'] as const) : []),
          ...(requirement.requiresOutputReview && requirement.isPostExecution ? (['edit'] as const) : []),
        ];
    const resolution = plan.fit ? fitting[plan.pick % fitting.length]! : plan.resolution;
    const body: Record<string, unknown> = { stepId: requirement.stepId, resolution };
    switch (resolution) {
      case 'reject':
        body['feedback'] = plan.feedback;
        break;
      case 'edit':
        body['editedOutput'] = plan.value ?? { edited: true };
        break;
      case 'user_input':
        body['userInput'] = Object.fromEntries((requirement.userInputSchema ?? []).map((field: { name: string; fieldType?: string; allowedValues?: unknown[] | null }) => [field.name, fieldValue(field, plan.value)]));
        break;
      case 'route_select': {
        const available: string[] = requirement.availableChoices ?? [];
        const picked = [...new Set(plan.choices.map((i) => available[i % Math.max(1, available.length)]).filter((c) => c !== undefined))];
        body['selectedChoices'] = plan.fit && picked.length === 0 && available.length > 0 ? [available[0]] : picked;
        break;
      }
    }
    return body;
  }

  const END_EVENTS: Record<string, string> = { completed: 'run.completed', failed: 'run.failed', cancelled: 'run.cancelled', awaiting_approval: 'run.awaiting_approval' };
  type RunCase = [body: unknown, input: Record<string, unknown>, decisions: Decision[]];
  const gated = (name: string) => ({ name, canvas: CANVAS, nodes: [{ name: 'G', nodeType: 'step', executorKey: 'echo', humanReview: { requiresConfirmation: true } }] });
  const runBounds: Bounds<RunCase> = {
    numRuns: 400,
    timeLimitMs: 3_000,
    // Each way a run ends, once for sure.
    examples: [
      [{ name: 'fuzz run completes', canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'echo', config: { in: { $cel: 'input' } } }] }, { a: 'b' }, []],
      [{ name: 'fuzz run fails', canvas: CANVAS, nodes: [{ name: 'C', nodeType: 'condition', conditionCel: 'int(input.n) / 0 == 1', trueSteps: [{ name: 'A', nodeType: 'step', executorKey: 'echo' }] }] }, { n: 1 }, []],
      [gated('fuzz run decided'), {}, [{ pick: 0, fit: true, resolution: 'confirm', value: null, feedback: null, choices: [] }]],
      [gated('fuzz run waits'), {}, []],
    ],
  };
  it(
    'a saved definition runs to its end or its gates, its gates take generated decisions, and the run reads back as declared after each step',
    async () => {
      const ended = new Map<string, number>();
      let decided = 0;
      await fuzz(
        fc.tuple(workflowBody({ executable: true }), initialInput, fc.array(decision, { maxLength: 6 })),
        async ([body, input, plans]) => {
          const created = await send({ method: 'POST', route: `${API}/workflows`, url: `${API}/workflows`, body });
          if (created.status !== 201) return; // whether it should have been saved is the business of the first property
          const workflowId = created.body.id as string;
          const toggled = await send({ method: 'POST', route: `${API}/workflows/{workflow_id}/toggle`, url: `${API}/workflows/${workflowId}/toggle`, body: { enabled: true } });
          expect(toggled.status).toBe(200);
          const triggered = await send({ method: 'POST', route: `${API}/workflows/{workflow_id}/runs`, url: `${API}/workflows/${workflowId}/runs`, body: { initialInput: input } });
          expect(triggered.status, JSON.stringify(triggered.body)).toBe(202);
          const runId = triggered.body.runId as string;
          const runUrl = `${API}/workflows/${workflowId}/runs/${runId}`;

          /** The run as every read shows it, checked for consistency; send() waited for the engine, so it has ended or waits at its gates. */
          const observe = async () => {
            const run = (await send({ method: 'GET', route: `${API}/workflows/{workflow_id}/runs/{run_id}`, url: runUrl })).body;
            expect(Object.keys(END_EVENTS), JSON.stringify(run).slice(0, 1_000)).toContain(run.status);
            expect((await send({ method: 'GET', route: `${API}/runs/{run_id}`, url: `${API}/runs/${runId}` })).body.status).toBe(run.status);
            const nodes = (await send({ method: 'GET', route: `${API}/workflows/{workflow_id}/runs/{run_id}/nodes`, url: `${runUrl}/nodes` })).body;
            expect(nodes.pagination.total).toBe(run.nodeRunCount);
            const events = (await send({ method: 'GET', route: `${API}/workflows/{workflow_id}/runs/{run_id}/events`, url: `${runUrl}/events?limit=1000` })).body.events;
            expect(events.map((e: { seq: number }) => e.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
            expect(events.at(-1)?.type).toBe(END_EVENTS[run.status]);
            const undecided = run.pendingRequirements.filter((r: { decidedAt?: unknown; resolution?: unknown }) => !r.resolution && !r.decidedAt);
            if (run.status === 'awaiting_approval') {
              // Every undecided gate is in the inbox.
              const inbox = (await send({ method: 'GET', route: `${API}/approvals`, url: `${API}/approvals?runId=${runId}&perPage=100` })).body;
              expect(inbox.approvals.map((a: { requirement: { stepId: string } }) => a.requirement.stepId).sort()).toEqual(undecided.map((r: { stepId: string }) => r.stepId).sort());
              expect(undecided.length).toBeGreaterThan(0);
            }
            return { run, undecided };
          };

          let { run, undecided } = await observe();
          for (const plan of plans) {
            if (run.status !== 'awaiting_approval') break;
            const requirement = undecided[plan.pick % undecided.length];
            const answer = await send({ method: 'POST', route: `${API}/workflows/{workflow_id}/runs/{run_id}/approve`, url: `${runUrl}/approve`, body: decisionFor(requirement, plan) });
            if (answer.status !== 200) continue; // a resolution that does not fit the gate: a clean 400 (checked by send)
            decided += 1;
            ({ run, undecided } = await observe());
          }
          ended.set(run.status, (ended.get(run.status) ?? 0) + 1);
          if (run.status === 'awaiting_approval') {
            const cancelled = await send({ method: 'POST', route: `${API}/workflows/{workflow_id}/runs/{run_id}/cancel`, url: `${runUrl}/cancel`, body: { reason: 'fuzz' } });
            expect(cancelled.body.status).toBe('cancelled');
          }
        },
        runBounds,
      );
      if (process.env['FUZZ_STATS']) console.log(`runs of generated definitions: ${JSON.stringify(Object.fromEntries(ended))}, ${decided} decisions taken`);
      // Generated definitions end every way, and generated decisions move runs on.
      expect([...ended.keys()]).toEqual(expect.arrayContaining(['awaiting_approval', 'completed', 'failed']));
      expect(decided).toBeGreaterThan(0);
    },
    testTimeout(runBounds),
  );
});

describe('fuzzing queries and path ids', () => {
  /** One read endpoint: its OpenAPI path, a URL for the ids picked, and its query's arbitrary. */
  interface Read {
    route: string;
    url: (ids: { workflowId: string; runId: string; nodeRunId: string }) => string;
    query: Arbitrary<string>;
    /** Checks a 200 against the query sent (its parameters as the app reads them). */
    check?: (body: any, query: URLSearchParams) => void;
  }

  /** The single value of `name` in `query`, or undefined (absent or repeated). */
  const single = (query: URLSearchParams, name: string) => (query.getAll(name).length === 1 ? query.get(name)! : undefined);
  const pageOf = (body: any, query: URLSearchParams, items: unknown[]) => {
    const { total, page, perPage, totalPages } = body.pagination;
    expect(items.length).toBeLessThanOrEqual(perPage);
    expect(totalPages).toBe(Math.ceil(total / perPage));
    const asked = single(query, 'page');
    if (asked !== undefined && /^[1-9][0-9]{0,5}$/.test(asked)) expect(page).toBe(Number(asked));
    const size = single(query, 'perPage');
    if (size !== undefined && /^[1-9][0-9]?$|^100$/.test(size)) expect(perPage).toBe(Number(size));
  };
  /** Ids compare case-insensitively (a filter may be sent in upper case). */
  const sameId = (a: unknown, b: string) => expect(String(a).toLowerCase()).toBe(b.toLowerCase());

  const statuses = fc.constantFrom('pending', 'running', 'paused', 'awaiting_approval', 'completed', 'failed', 'cancelled');
  const eventTypes = fc
    .array(fc.oneof({ arbitrary: fc.constantFrom(...RUN_EVENT_TYPES), weight: 6 }, { arbitrary: fc.constantFrom('', ' ', 'run.*', 'RUN.STARTED', 'nope'), weight: 1 }), { maxLength: 4 })
    .map((types) => types.join(','));

  const READS: Read[] = [
    {
      route: `${API}/workflows`,
      url: () => `${API}/workflows`,
      query: queryString(
        queryParams(WorkflowListQuery, {
          tag: fc.constantFrom('fuzz', 'team:hitl', 'nope', 'a'.repeat(51), 'ä'),
          query: fc.oneof(fc.constantFrom('fuzz', 'FUZZ', '.*', '(', '$where', '', '\\', 'x'.repeat(201)), fc.string({ maxLength: 5 })),
        }),
      ),
      check: (body, query) => {
        pageOf(body, query, body.workflows);
        const tag = single(query, 'tag');
        if (tag !== undefined) for (const w of body.workflows) expect(w.tags).toContain(tag);
        const enabled = single(query, 'enabled');
        if (enabled === 'true' || enabled === 'false') for (const w of body.workflows) expect(String(w.enabled)).toBe(enabled);
        const search = single(query, 'query');
        // Literal and case-insensitive (checked for ASCII searches, where lower-casing is unambiguous).
        if (search && /^[\x20-\x7e]+$/.test(search)) for (const w of body.workflows) expect(`${w.name}\n${w.description ?? ''}`.toLowerCase()).toContain(search.toLowerCase());
      },
    },
    {
      route: `${API}/runs`,
      url: () => `${API}/runs`,
      query: queryString(queryParams(AllRunsQuery, { status: statuses, workflowId: fc.oneof(fc.constantFrom('@gates', '@plain'), hex24), triggerSource: fc.constantFrom('manual', 'retry', 'fuzz', 'x') })),
      check: (body, query) => {
        pageOf(body, query, body.runs);
        const status = single(query, 'status');
        if (status !== undefined) for (const r of body.runs) expect(r.status).toBe(status);
        const workflowId = single(query, 'workflowId');
        if (workflowId !== undefined) for (const r of body.runs) sameId(r.workflowDefinitionId, workflowId);
        const source = single(query, 'triggerSource');
        if (source !== undefined) for (const r of body.runs) expect(r.triggerSource).toBe(source);
        if (single(query, 'includeNodeRuns') === 'false') for (const r of body.runs) expect(r.nodeRuns).toEqual([]);
      },
    },
    {
      route: `${API}/approvals`,
      url: () => `${API}/approvals`,
      query: queryString(queryParams(ApprovalListQuery, { runId: fc.oneof(fc.constant('@gated'), hex24), workflowId: fc.oneof(fc.constant('@gates'), hex24), nodeId: fc.constantFrom(...NODE_IDS, 'nope') })),
      check: (body, query) => {
        pageOf(body, query, body.approvals);
        const runId = single(query, 'runId');
        if (runId !== undefined) for (const a of body.approvals) sameId(a.runId, runId);
        const workflowId = single(query, 'workflowId');
        if (workflowId !== undefined) for (const a of body.approvals) sameId(a.workflowId, workflowId);
        const nodeId = single(query, 'nodeId');
        if (nodeId !== undefined) for (const a of body.approvals) expect(a.nodeId).toBe(nodeId);
        // The inbox lists undecided gates only.
        for (const a of body.approvals) expect(a.requirement.resolution ?? null).toBeNull();
      },
    },
    {
      route: `${API}/workflows/{workflow_id}/runs`,
      url: ({ workflowId }) => `${API}/workflows/${workflowId}/runs`,
      query: queryString(queryParams(RunListQuery, { status: statuses })),
      check: (body, query) => {
        pageOf(body, query, body.runs);
        const status = single(query, 'status');
        if (status !== undefined) for (const r of body.runs) expect(r.status).toBe(status);
      },
    },
    {
      route: `${API}/workflows/{workflow_id}/runs/{run_id}/events`,
      url: ({ workflowId, runId }) => `${API}/workflows/${workflowId}/runs/${runId}/events`,
      query: queryString(queryParams(RunEventListQuery, { types: eventTypes, nodeId: fc.constantFrom(...NODE_IDS, 'nope', '') })),
      check: (body, query) => {
        const seqs: number[] = body.events.map((e: { seq: number }) => e.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        const after = single(query, 'afterSeq');
        if (after !== undefined && /^[0-9]{1,9}$/.test(after)) for (const seq of seqs) expect(seq).toBeGreaterThan(Number(after));
        const limit = single(query, 'limit');
        if (limit !== undefined && /^([1-9][0-9]{0,2}|1000)$/.test(limit)) expect(seqs.length).toBeLessThanOrEqual(Number(limit));
        const types = single(query, 'types');
        if (types !== undefined && types.trim() !== '') {
          const wanted = types.split(',').map((t) => t.trim()).filter(Boolean);
          for (const e of body.events) expect(wanted).toContain(e.type);
        }
        const nodeId = single(query, 'nodeId');
        if (nodeId !== undefined) for (const e of body.events) expect(e.nodeId).toBe(nodeId);
      },
    },
    {
      route: `${API}/workflows/{workflow_id}/runs/{run_id}/nodes`,
      url: ({ workflowId, runId }) => `${API}/workflows/${workflowId}/runs/${runId}/nodes`,
      query: queryString(queryParams(NodeRunListQuery)),
      check: (body, query) => pageOf(body, query, body.nodeRuns),
    },
    {
      route: `${API}/workflows/{workflow_id}/runs/{run_id}/children`,
      url: ({ workflowId, runId }) => `${API}/workflows/${workflowId}/runs/${runId}/children`,
      query: queryString(queryParams(PageQuery)),
      check: (body, query) => pageOf(body, query, body.runs),
    },
    { route: `${API}/workflows/{workflow_id}`, url: ({ workflowId }) => `${API}/workflows/${workflowId}`, query: queryString(fc.constant({})) },
    { route: `${API}/workflows/{workflow_id}/runs/{run_id}`, url: ({ workflowId, runId }) => `${API}/workflows/${workflowId}/runs/${runId}`, query: queryString(fc.constant({})) },
    { route: `${API}/runs/{run_id}`, url: ({ runId }) => `${API}/runs/${runId}`, query: queryString(fc.constant({})) },
    {
      route: `${API}/workflows/{workflow_id}/runs/{run_id}/nodes/{node_run_id}`,
      url: ({ workflowId, runId, nodeRunId }) => `${API}/workflows/${workflowId}/runs/${runId}/nodes/${nodeRunId}`,
      query: queryString(fc.constant({})),
    },
  ];

  type ReadCase = [read: [route: string, query: string], ids: { workflowId: string; runId: string; nodeRunId: string }, pick: number];
  const fixtureIds = { workflowId: '@gates', runId: '@completed', nodeRunId: '@node-run' };
  const readBounds: Bounds<ReadCase> = {
    numRuns: 2_000,
    timeLimitMs: 3_000,
    // Every endpoint once without a query (a 200), then a few filters that match something.
    examples: [
      ...READS.map((read): ReadCase => [[read.route, ''], fixtureIds, 0]),
      [[`${API}/workflows`, '?tag=team%3Ahitl&enabled=true&query=FUZZ%20g&includeRunning=true'], fixtureIds, 0],
      [[`${API}/runs`, '?status=completed&workflowId=%40gates&includeNodeRuns=false&perPage=1&page=2'], fixtureIds, 0],
      [[`${API}/approvals`, '?runId=%40gated&nodeId=form'], fixtureIds, 0],
      [[`${API}/workflows/{workflow_id}/runs/{run_id}/events`, '?types=node.started,run.completed&afterSeq=2&limit=3'], fixtureIds, 0],
    ],
  };
  it(
    'GET list and read endpoints: any query or id is a 200 that keeps its filters, or a clean 4xx; nothing is written',
    async () => {
      const ids = fc.record({
        workflowId: fc.oneof({ arbitrary: fc.constantFrom('@gates', '@plain'), weight: 6 }, { arbitrary: otherId(), weight: 1 }),
        runId: fc.oneof({ arbitrary: fc.constantFrom('@completed', '@gated', '@cancelled', '@other', '@plain-run'), weight: 6 }, { arbitrary: otherId(), weight: 1 }),
        nodeRunId: fc.oneof({ arbitrary: fc.constant('@node-run'), weight: 3 }, { arbitrary: otherId(), weight: 1 }),
      });
      // The endpoint as its route (printable in a counterexample), with a query for it.
      const read = fc.nat(READS.length - 1).chain((i) => fc.tuple(fc.constant(READS[i]!.route), READS[i]!.query));
      const answered = new Set<string>();
      await fuzz(
        fc.tuple(read, ids, fc.nat()),
        async ([[route, query], symbolic, pick]) => {
          const endpoint = READS.find((e) => e.route === route)!;
          const path = resolveSymbols(endpoint.url(symbolic), pick);
          const search = resolveSymbols(query, pick);
          const answer = await send({ method: 'GET', route, url: `${path}${search}` });
          if (answer.status !== 200) return;
          answered.add(route);
          // What the checks look at, URLSearchParams reads as the app does.
          endpoint.check?.(answer.body, new URLSearchParams(search.slice(1)));
        },
        readBounds,
      );
      expect([...answered].sort()).toEqual(READS.map((r) => r.route).sort());
    },
    testTimeout(readBounds),
  );
});
