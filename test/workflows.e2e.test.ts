/**
 * Workflow definitions over real HTTP (spec endpoints 1-6, "Error Response Format", "Data Models").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startService();
});

afterAll(async () => {
  await svc?.close();
});

/** The spec's Customer Onboarding create body, with executor keys of the example registry. */
function onboardingBody(name: string): Record<string, unknown> {
  return {
    name,
    description: 'Automated workflow for new customer onboarding with email validation, parallel processing, and conditional routing',
    canvas: CANVAS,
    nodes: [
      {
        name: 'Validate Customer Email',
        nodeType: 'step',
        position: { x: 80, y: 220 },
        executorKey: 'echo',
        stepConfig: { maxRetries: 3, onError: 'retry', backoffBaseSeconds: 2.0, backoffMaxSeconds: 30.0 },
        config: { validationRules: ['format', 'domain', 'mx_record'], allowedDomains: ['company.com', 'partner.com'] },
      },
      {
        name: 'Check Customer Type',
        nodeType: 'condition',
        position: { x: 360, y: 220 },
        conditionCel: "input.customerType == 'enterprise'",
        trueSteps: [
          {
            name: 'Enterprise Onboarding Path',
            nodeType: 'parallel',
            position: { x: 640, y: 160 },
            children: [
              {
                name: 'Send Welcome Email',
                nodeType: 'step',
                position: { x: 920, y: 120 },
                executorKey: 'echo-tool',
                stepConfig: { maxRetries: 2, onError: 'skip' },
                config: { message: 'enterprise_welcome' },
              },
              {
                name: 'Create Premium Account',
                nodeType: 'step',
                a2aPool: ['flaky', 'echo', 'builtin.echo'],
                stepConfig: { maxRetries: 5, onError: 'retry', backoffBaseSeconds: 1.0, backoffMaxSeconds: 60.0 },
                config: { accountType: 'premium', features: ['sso', 'api_access', 'priority_support'] },
              },
              {
                name: 'Notify Sales Team',
                nodeType: 'step',
                executorKey: 'echo',
                config: { channel: '#sales-enterprise', messageTemplate: 'New enterprise customer: {{customerName}}' },
              },
            ],
          },
        ],
        falseSteps: [{ name: 'Standard Onboarding', nodeType: 'step', executorKey: 'sleep', config: { ms: 1, trialDays: 14 } }],
      },
      {
        name: 'Send Onboarding Complete Email',
        nodeType: 'step',
        executorKey: 'echo',
        config: { template: 'onboarding_complete', includeLoginLink: true },
      },
    ],
  };
}

/** Asserts the spec's "every node carries every container list, absent scalars are null". */
function expectCompleteNode(node: any, ids: Set<string>): void {
  expect(typeof node.id, `id of ${node.name}`).toBe('string');
  expect(node.id.length).toBeGreaterThan(0);
  expect(ids.has(node.id), `node id ${node.id} is unique`).toBe(false);
  ids.add(node.id);
  for (const list of ['children', 'trueSteps', 'falseSteps', 'choices', 'a2aPool']) {
    expect(Array.isArray(node[list]), `${node.name}.${list} is a list`).toBe(true);
  }
  for (const field of ['executorKey', 'stepConfig', 'conditionCel', 'loopConfig']) {
    expect(node, `${node.name} carries ${field}`).toHaveProperty(field);
  }
  expect(node.position).toEqual({ x: expect.any(Number), y: expect.any(Number) });
  expect(node.config).toEqual(expect.any(Object));
  for (const child of [...node.children, ...node.trueSteps, ...node.falseSteps]) expectCompleteNode(child, ids);
  for (const choice of node.choices) for (const step of choice.steps) expectCompleteNode(step, ids);
}

function createBody(nodes: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: uniqueName('wf'), canvas: CANVAS, nodes, ...extra };
}

async function expectInvalid(body: Record<string, unknown>, message: RegExp) {
  const response = await svc.api.post(wf(), body);
  expect(response.status, response.text).toBe(400);
  expect(response.body.detail.error).toBe('invalid_request');
  expect(response.body.detail.message).toMatch(message);
  return response.body.detail;
}

describe('create and read', () => {
  it('creates a disabled version-1 workflow with generated ids and complete nodes', async () => {
    const name = uniqueName('Customer Onboarding Workflow');
    const response = await svc.api.post(wf(), onboardingBody(name));
    expect(response.status, response.text).toBe(201);
    const created = response.body;
    expect(created).toMatchObject({ name, enabled: false, version: 1, canvas: { viewport: { x: 0, y: 0, zoom: 1 } } });
    expect(created.id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    expect(created.updatedAt).toBe(created.createdAt);

    const ids = new Set<string>();
    for (const node of created.nodes) expectCompleteNode(node, ids);
    expect(ids.size).toBe(8);

    const [validate, check, complete] = created.nodes;
    expect(validate).toMatchObject({
      nodeType: 'step',
      position: { x: 80, y: 220 },
      executorKey: 'echo',
      a2aPool: [],
      stepConfig: { maxRetries: 3, onError: 'retry', backoffBaseSeconds: 2, backoffMaxSeconds: 30 },
      config: { validationRules: ['format', 'domain', 'mx_record'], allowedDomains: ['company.com', 'partner.com'] },
      children: [],
      trueSteps: [],
      falseSteps: [],
      choices: [],
      conditionCel: null,
      loopConfig: null,
    });
    expect(check).toMatchObject({ nodeType: 'condition', executorKey: null, stepConfig: null, children: [], choices: [], loopConfig: null });
    expect(check.conditionCel).toBe("input.customerType == 'enterprise'");
    const parallel = check.trueSteps[0];
    expect(parallel).toMatchObject({ name: 'Enterprise Onboarding Path', nodeType: 'parallel', executorKey: null, stepConfig: null, config: {} });
    expect(parallel.children.map((c: any) => c.name)).toEqual(['Send Welcome Email', 'Create Premium Account', 'Notify Sales Team']);
    // Partial stepConfig gets the spec's defaults for the rest.
    expect(parallel.children[0].stepConfig).toEqual({ maxRetries: 2, onError: 'skip', backoffBaseSeconds: 1, backoffMaxSeconds: 60, timeoutSeconds: null });
    expect(parallel.children[1]).toMatchObject({ executorKey: null, a2aPool: ['flaky', 'echo', 'builtin.echo'] });
    // No stepConfig given: null (not invented); no position given: (0, 0).
    expect(parallel.children[2]).toMatchObject({ stepConfig: null, position: { x: 0, y: 0 } });
    expect(check.falseSteps[0]).toMatchObject({ name: 'Standard Onboarding', executorKey: 'sleep' });
    expect(complete.name).toBe('Send Onboarding Complete Email');

    const detail = await svc.api.get(wf(`/${created.id}`));
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(created);
  });

  it('keeps client-supplied node ids and rejects duplicate ones', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('A', {}, { id: 'node-a' }), echoStep('B', {}, { id: 'node-b' })]));
    expect(created.nodes.map((n: any) => n.id)).toEqual(['node-a', 'node-b']);
    await expectInvalid(createBody([echoStep('A', {}, { id: 'same' }), echoStep('B', {}, { id: 'same' })]), /Node 'B'.*duplicate node id 'same'/);
  });

  it('refuses `enabled` in a create body and unknown legacy fields with a 400 naming each, creating nothing', async () => {
    const before = (await svc.api.get(wf('?perPage=100'))).body.pagination.total;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [createBody([echoStep('A')], { enabled: true }), /body has an unknown property 'enabled'/],
      [createBody([echoStep('A')], { unknownTopLevel: 'x' }), /body has an unknown property 'unknownTopLevel'/],
      [createBody([{ ...echoStep('Legacy'), requireApproval: true }]), /body\.nodes\.0 has an unknown property 'requireApproval'/],
      [createBody([{ ...echoStep('Legacy'), approval_timeout_seconds: 30 }]), /unknown property 'approval_timeout_seconds'/],
      [createBody([{ ...echoStep('A'), humanReview: { requiresConfirmation: true, approvalTimeout: 5 } }]), /body\.nodes\.0\.humanReview has an unknown property 'approvalTimeout'/],
    ];
    for (const [body, message] of cases) {
      const response = await svc.api.post(wf(), body);
      expect(response.status, response.text).toBe(400);
      expect(response.body.detail.error).toBe('invalid_request');
      expect(response.body.detail.message).toMatch(message);
    }
    expect((await svc.api.get(wf('?perPage=100'))).body.pagination.total).toBe(before);
  });

  it('round-trips user config keys with "$" and "." unchanged', async () => {
    const config = {
      $where: 1,
      'a.b': { 'c.d': 2, $gt: [{ 'e.f': '$g' }] },
      '~p': 'tilde',
      normal_snake_key: { camelCase: true },
      nested: { $set: { 'x.y': null } },
    };
    const created = await svc.createWorkflow(createBody([echoStep('Keys', config)]));
    expect(created.nodes[0].config).toEqual(config);
    const detail = await svc.api.get(wf(`/${created.id}`));
    expect(detail.body.nodes[0].config).toEqual(config);
  });

  // BUG (apps/api/src/app.ts:33, ajv `coerceTypes: 'array'`): an explicit null in a field the
  // schema declares nullable (Union [String, Null], String first) is coerced to "" (and
  // `a2aPool: null` to [""]) before validation, so null is not "absent": `description: null` is
  // stored as "", `id: null` becomes the node id "", `conditionCel: null` on a step and
  // `executorKey: null` on a container are rejected, `endConditionCel: null` is a CEL syntax error.
  it('treats explicit nulls in nullable fields as absent', async () => {
    const created = await svc.api.post(
      wf(),
      createBody(
        [
          echoStep('Step', {}, { id: null, conditionCel: null, a2aPool: null, stepConfig: null, loopConfig: null, humanReview: null }),
          { name: 'Par', nodeType: 'parallel', executorKey: null, conditionCel: null, children: [echoStep('A'), echoStep('B')] },
          { name: 'Loop', nodeType: 'loop', loopConfig: { maxIterations: 1, endConditionCel: null }, children: [echoStep('Body')] },
        ],
        { description: null },
      ),
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body.description).toBeNull();
    expect(created.body.nodes[0].id).not.toBe('');
    expect(created.body.nodes[2].loopConfig).toEqual({ maxIterations: 1, endConditionCel: null });
  });

  // Same root cause as above: the detail returned by GET carries `executorKey: null`,
  // `conditionCel: null`, ... and cannot be sent back as a PUT body.
  it('accepts a workflow read with GET back as a PUT body, without a version bump', async () => {
    const created = await svc.createWorkflow(onboardingBody(uniqueName('Round Trip')));
    const { name, description, canvas, nodes } = (await svc.api.get(wf(`/${created.id}`))).body;
    const updated = await svc.api.put(wf(`/${created.id}`), { name, description, canvas, nodes });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.nodes).toEqual(created.nodes);
    expect(updated.body.version).toBe(1);
  });

  it('answers 400 "Invalid workflow ID" for malformed ids and 404 for unknown ones', async () => {
    for (const bad of ['zzz', '0123456789abcdef0123456', '0123456789abcdef012345678', 'g123456789abcdef01234567']) {
      const cases = [
        svc.api.get(wf(`/${bad}`)),
        svc.api.put(wf(`/${bad}`), { name: 'x' }),
        svc.api.delete(wf(`/${bad}`)),
        svc.api.post(wf(`/${bad}/toggle`), { enabled: true }),
      ];
      for (const response of await Promise.all(cases)) {
        expect(response.status, response.text).toBe(400);
        expect(response.body.detail.error).toBe('invalid_request');
        expect(response.body.detail.message).toContain('Invalid workflow ID');
      }
    }
    const unknown = '0123456789abcdef01234567';
    const cases = [
      svc.api.get(wf(`/${unknown}`)),
      svc.api.put(wf(`/${unknown}`), { name: uniqueName('x') }),
      svc.api.delete(wf(`/${unknown}`)),
      svc.api.post(wf(`/${unknown}/toggle`), { enabled: true }),
    ];
    for (const response of await Promise.all(cases)) {
      expect(response.status, response.text).toBe(404);
      expect(response.body).toEqual({ detail: { error: 'resource_not_found', message: 'Workflow not found', resource: 'workflow' } });
    }
  });

  it('answers malformed JSON, an empty JSON body and unknown routes with the error body', async () => {
    const malformed = await svc.api.request('POST', wf(), undefined, { raw: '{"name": "x",' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/JSON/) });

    const empty = await svc.api.request('POST', wf(), undefined, { raw: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.detail.error).toBe('invalid_request');

    const notObject = await svc.api.request('POST', wf(), undefined, { raw: '[1, 2]' });
    expect(notObject.status).toBe(400);
    expect(notObject.body.detail.error).toBe('invalid_request');

    const tooLarge = await svc.api.post(wf(), createBody([echoStep('A')], { description: 'x'.repeat(1024 * 1024 + 1) }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.detail.error).toEqual(expect.any(String));

    for (const [method, path] of [
      ['GET', '/api/v1/nothing-here'],
      ['GET', wf('/0123456789abcdef01234567/nothing')],
      ['PATCH', wf('/0123456789abcdef01234567')],
    ] as const) {
      const response = await svc.api.request(method, path);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.detail.error).toBe('resource_not_found');
      expect(response.body.detail.message).toEqual(expect.any(String));
    }
  });
});

describe('list', () => {
  it('searches name and description, case-insensitively, as literal text', async () => {
    const token = uniqueName('tok').replace(' ', '');
    const descToken = uniqueName('desc').replace(' ', '');
    const abc = await svc.createWorkflow(createBody([echoStep('S')], { name: `Search ${token} abc`, description: null }));
    const dotted = await svc.createWorkflow(
      createBody([echoStep('S')], { name: `Search ${token} dotted`, description: `Mentions a.c literally; ${descToken.toUpperCase()}` }),
    );
    const paren = await svc.createWorkflow(createBody([echoStep('S')], { name: `Search ${token} paren (x) [y] a-b/c`, description: 'Upper ABC' }));

    const ids = async (query: string) => {
      const response = await svc.api.get(wf(`?query=${encodeURIComponent(query)}&perPage=100`));
      expect(response.status, `${query}: ${response.text}`).toBe(200);
      return response.body.workflows.map((w: any) => w.id) as string[];
    };
    // Name match, case-insensitive.
    expect(new Set(await ids(token.toUpperCase()))).toEqual(new Set([abc.id, dotted.id, paren.id]));
    // Description match (the token appears in upper case only in one description).
    expect(await ids(descToken)).toEqual([dotted.id]);
    // Case-insensitive on both fields: "abc" in one name, "ABC" in another description.
    const abcHits = await ids('aBc');
    expect(abcHits).toEqual(expect.arrayContaining([abc.id, paren.id]));
    expect(abcHits).not.toContain(dotted.id);
    // Regex metacharacters are literal.
    const dotHits = await ids('a.c');
    expect(dotHits).toContain(dotted.id);
    expect(dotHits).not.toContain(abc.id);
    expect(dotHits).not.toContain(paren.id);
    expect(await ids('(x) [y]')).toEqual([paren.id]);
    expect(await ids(`${token} paren (x) [y] a-b/c`)).toEqual([paren.id]);
    for (const meta of ['(', '[', '*', '+', '?', '\\', '^', '$', '|', '{1}', '.*']) {
      const hits = await ids(meta);
      expect(hits, meta).not.toContain(abc.id);
    }
    expect(await ids('.*')).toEqual([]);
    // A query matching nothing.
    expect(await ids(`${token}-no-such-thing`)).toEqual([]);
  });

  it('paginates newest first with page, perPage, total and totalPages', async () => {
    const token = uniqueName('page').replace(' ', '');
    const created: any[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(await svc.createWorkflow(createBody([echoStep('S'), echoStep('T')], { name: `${token} ${i}`, description: `number ${i}` })));
    }
    const newestFirst = created.map((w) => w.id).reverse();

    const page1 = await svc.api.get(wf(`?query=${token}&perPage=2`));
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ total: 5, page: 1, perPage: 2, totalPages: 3 });
    expect(page1.body.workflows.map((w: any) => w.id)).toEqual(newestFirst.slice(0, 2));
    const row = page1.body.workflows[0];
    expect(row).toEqual({
      id: created[4].id,
      name: `${token} 4`,
      description: 'number 4',
      numNodes: 2,
      enabled: false,
      tags: [],
      version: 1,
      createdAt: created[4].createdAt,
      updatedAt: created[4].updatedAt,
    });

    const page3 = await svc.api.get(wf(`?query=${token}&perPage=2&page=3`));
    expect(page3.body.pagination).toEqual({ total: 5, page: 3, perPage: 2, totalPages: 3 });
    expect(page3.body.workflows.map((w: any) => w.id)).toEqual(newestFirst.slice(4));

    const beyond = await svc.api.get(wf(`?query=${token}&perPage=2&page=4`));
    expect(beyond.status).toBe(200);
    expect(beyond.body.workflows).toEqual([]);
    expect(beyond.body.pagination.total).toBe(5);

    const defaults = await svc.api.get(wf(`?query=${token}`));
    expect(defaults.body.pagination).toEqual({ total: 5, page: 1, perPage: 20, totalPages: 1 });

    const all = await svc.api.get(wf('?perPage=100'));
    expect(all.body.pagination.total).toBeGreaterThanOrEqual(5);
    expect(all.body.workflows.length).toBe(Math.min(100, all.body.pagination.total));
  });

  it('counts nodes at every depth in numNodes', async () => {
    const name = uniqueName('Customer Onboarding Workflow');
    const created = await svc.createWorkflow(onboardingBody(name));
    const list = await svc.api.get(wf(`?query=${encodeURIComponent(name)}`));
    expect(list.body.workflows).toEqual([expect.objectContaining({ id: created.id, numNodes: 8 })]);
  });

  it('rejects perPage above 100 and other bad paging values with 400', async () => {
    for (const query of ['perPage=101', 'perPage=0', 'page=0', 'page=-1', 'page=abc', 'perPage=2.5']) {
      const response = await svc.api.get(wf(`?${query}`));
      expect(response.status, query).toBe(400);
      expect(response.body.detail.error).toBe('invalid_request');
    }
    const max = await svc.api.get(wf('?perPage=100'));
    expect(max.status).toBe(200);
  });
});

describe('tags', () => {
  it('stores tags on create (duplicates dropped, default []) and returns them in detail and list', async () => {
    const tagged = await svc.createWorkflow(createBody([echoStep('A')], { tags: ['team:billing', 'nightly', 'team:billing', 'a/b c_d.e-f'] }));
    expect(tagged.tags).toEqual(['team:billing', 'nightly', 'a/b c_d.e-f']);
    expect((await svc.api.get(wf(`/${tagged.id}`))).body.tags).toEqual(['team:billing', 'nightly', 'a/b c_d.e-f']);
    const untagged = await svc.createWorkflow(createBody([echoStep('A')]));
    expect(untagged.tags).toEqual([]);
    const list = await svc.api.get(wf(`?query=${encodeURIComponent(tagged.name)}`));
    expect(list.body.workflows).toEqual([expect.objectContaining({ id: tagged.id, tags: ['team:billing', 'nightly', 'a/b c_d.e-f'] })]);
    // The validate endpoint takes the same body.
    const checked = await svc.api.post(wf('/validate'), createBody([echoStep('A')], { tags: ['x'] }));
    expect(checked.body).toEqual({ valid: true, problems: [] });
  });

  it('rejects bad tags on create and update with 400, changing nothing', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('A')], { tags: ['keep'] }));
    const bad: unknown[] = [
      [''],
      ['x'.repeat(51)],
      ['comma,separated'],
      ['ümlaut'],
      ['line\nbreak'],
      [1],
      [null],
      'not-a-list',
      Array.from({ length: 21 }, (_, i) => `t${i}`),
    ];
    for (const tags of bad) {
      const onCreate = await svc.api.post(wf(), createBody([echoStep('A')], { tags }));
      expect(onCreate.status, `create ${JSON.stringify(tags)}: ${onCreate.text}`).toBe(400);
      expect(onCreate.body.detail.error).toBe('invalid_request');
      expect(onCreate.body.detail.message).toMatch(/tags/);
      const onUpdate = await svc.api.put(wf(`/${created.id}`), { tags });
      expect(onUpdate.status, `update ${JSON.stringify(tags)}`).toBe(400);
    }
    expect(await svc.api.post(wf('/validate'), createBody([echoStep('A')], { tags: [''] }))).toMatchObject({ status: 400 });
    expect((await svc.api.get(wf(`/${created.id}`))).body).toEqual(created);
    // 50 characters and 20 tags are fine; 21 entries that are 20 distinct tags are not (the limit counts what is sent).
    const edge = await svc.api.put(wf(`/${created.id}`), { tags: ['y'.repeat(50), ...Array.from({ length: 19 }, (_, i) => `t${i}`)] });
    expect(edge.status, edge.text).toBe(200);
    expect(edge.body.tags).toHaveLength(20);
  });

  it('changes tags with a PUT without bumping version, like enabled', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('A')], { tags: ['one'] }));
    const retagged = await svc.api.put(wf(`/${created.id}`), { tags: ['two', 'one', 'two'] });
    expect(retagged.status, retagged.text).toBe(200);
    expect(retagged.body).toMatchObject({ tags: ['two', 'one'], version: 1, name: created.name });
    // Other fields are kept when tags are not sent, and tags when other fields change.
    const renamed = await svc.api.put(wf(`/${created.id}`), { description: 'changed' });
    expect(renamed.body).toMatchObject({ tags: ['two', 'one'], version: 2 });
    const cleared = await svc.api.put(wf(`/${created.id}`), { tags: [] });
    expect(cleared.body).toMatchObject({ tags: [], version: 2 });
    // A PUT with tags and a definition change bumps once, for the definition.
    const both = await svc.api.put(wf(`/${created.id}`), { tags: ['three'], nodes: [echoStep('A'), echoStep('B')] });
    expect(both.body).toMatchObject({ tags: ['three'], version: 3 });
    // A run's definition snapshot has no tags.
    await svc.enable(created.id);
    const runId = (await svc.trigger(created.id)).body.runId as string;
    const run = await svc.waitForRun(created.id, runId);
    expect(run.definitionSnapshot).not.toHaveProperty('tags');
    expect(run.workflowVersion).toBe(3);
  });

  it('filters the list by tag, combined with query and pagination', async () => {
    const token = uniqueName('tagged').replace(' ', '');
    const tag = `team:${token}`;
    const made: any[] = [];
    for (let i = 0; i < 5; i++) {
      const tags = i % 2 === 0 ? [tag, `n${i}`] : [`n${i}`];
      made.push(await svc.createWorkflow(createBody([echoStep('A')], { name: `${token} ${i === 4 ? 'special' : 'plain'} ${i}`, tags })));
    }
    const ids = async (query: string) => {
      const response = await svc.api.get(wf(`?${query}`));
      expect(response.status, `${query}: ${response.text}`).toBe(200);
      return { ids: response.body.workflows.map((w: any) => w.id) as string[], pagination: response.body.pagination };
    };
    expect(await ids(`tag=${encodeURIComponent(tag)}`)).toEqual({
      ids: [made[4].id, made[2].id, made[0].id],
      pagination: { total: 3, page: 1, perPage: 20, totalPages: 1 },
    });
    expect(await ids(`tag=${encodeURIComponent(tag)}&perPage=2&page=2`)).toEqual({
      ids: [made[0].id],
      pagination: { total: 3, page: 2, perPage: 2, totalPages: 2 },
    });
    expect((await ids(`tag=${encodeURIComponent(tag)}&query=special`)).ids).toEqual([made[4].id]);
    // `enabled` filters on whether a workflow can be run.
    await svc.enable(made[2].id);
    expect((await ids(`tag=${encodeURIComponent(tag)}&enabled=true`)).ids).toEqual([made[2].id]);
    expect((await ids(`tag=${encodeURIComponent(tag)}&enabled=false`)).ids).toEqual([made[4].id, made[0].id]);
    expect((await ids(`tag=${encodeURIComponent(tag)}&query=${token}%20plain`)).ids).toEqual([made[2].id, made[0].id]);
    // Exact and case-sensitive: no prefix, substring or case-folded match.
    expect((await ids(`tag=${encodeURIComponent(tag.toUpperCase())}`)).ids).toEqual([]);
    expect((await ids(`tag=${encodeURIComponent(tag.slice(0, -1))}`)).ids).toEqual([]);
    expect((await ids('tag=team')).ids).not.toContain(made[0].id);
    // The tag of a query is checked like a stored one.
    for (const bad of ['tag=', `tag=${'x'.repeat(51)}`, 'tag=a%2Cb']) {
      const response = await svc.api.get(wf(`?${bad}`));
      expect(response.status, bad).toBe(400);
      expect(response.body.detail.error).toBe('invalid_request');
    }
  });

  it('reads a definition stored without tags (an older version) as having none', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('A')], { tags: ['legacy-check'] }));
    const definitions = svc.store.collection('workflow_definitions');
    const stored = await definitions.findOne({ name: created.name });
    expect(stored!['tags']).toEqual(['legacy-check']);
    await definitions.updateOne({ _id: stored!['_id'] }, { $unset: { tags: '' } });
    expect(await definitions.findOne({ _id: stored!['_id'] })).not.toHaveProperty('tags');
    expect((await svc.api.get(wf(`/${created.id}`))).body).toEqual({ ...created, tags: [] });
    const listed = await svc.api.get(wf(`?query=${encodeURIComponent(created.name)}`));
    expect(listed.body.workflows[0].tags).toEqual([]);
    expect((await svc.api.get(wf('?tag=legacy-check'))).body.workflows).toEqual([]);
    // A toggle keeps it tag-less; a PUT of tags gives it some.
    expect((await svc.api.post(wf(`/${created.id}/toggle`), { enabled: true })).body.tags).toEqual([]);
    expect((await svc.api.put(wf(`/${created.id}`), { tags: ['legacy-check'] })).body).toMatchObject({ tags: ['legacy-check'], version: 1 });
  });
});

describe('running counts (includeRunning)', () => {
  it('counts the runs of each listed workflow that have not ended, only when asked', async () => {
    const token = uniqueName('running').replace(' ', '');
    const gatedBody = { name: `${token} gated`, canvas: CANVAS, nodes: [{ ...echoStep('Gate'), id: 'gate', humanReview: { requiresConfirmation: true } }] };
    const gated = await svc.createWorkflow(gatedBody);
    await svc.enable(gated.id);
    const held = [(await svc.trigger(gated.id)).body.runId as string, (await svc.trigger(gated.id)).body.runId as string];
    for (const runId of held) await svc.waitForGate(gated.id, runId);
    const done = await svc.runWorkflow({ name: `${token} done`, canvas: CANVAS, nodes: [echoStep('A')] });
    const idle = await svc.createWorkflow({ name: `${token} idle`, canvas: CANVAS, nodes: [echoStep('A')] });

    const counted = await svc.api.get(wf(`?query=${token}&includeRunning=true`));
    expect(counted.status, counted.text).toBe(200);
    const counts = Object.fromEntries(counted.body.workflows.map((w: any) => [w.id, w.runningCount]));
    expect(counts).toEqual({ [gated.id]: 2, [done.workflowId]: 0, [idle.id]: 0 });

    const plain = await svc.api.get(wf(`?query=${token}`));
    expect(plain.body.workflows).toHaveLength(3);
    for (const row of plain.body.workflows) expect(row).not.toHaveProperty('runningCount');
    const off = await svc.api.get(wf(`?query=${token}&includeRunning=false`));
    for (const row of off.body.workflows) expect(row).not.toHaveProperty('runningCount');
    expect((await svc.api.get(wf('?includeRunning=maybe'))).status).toBe(400);

    // A paused run has not ended either; decided and cancelled ones have.
    expect((await svc.api.post(wf(`/${gated.id}/runs/${held[0]}/pause`))).body.status).toBe('paused');
    const withPaused = await svc.api.get(wf(`?query=${encodeURIComponent(gated.name)}&includeRunning=true`));
    expect(withPaused.body.workflows[0].runningCount).toBe(2);
    expect((await svc.api.post(wf(`/${gated.id}/runs/${held[0]}/cancel`))).status).toBe(200);
    expect((await svc.approve(gated.id, held[1]!, { stepId: 'gate', resolution: 'confirm' })).status).toBe(200);
    await svc.waitForRun(gated.id, held[1]!);
    const ended = await svc.api.get(wf(`?query=${encodeURIComponent(gated.name)}&includeRunning=true`));
    expect(ended.body.workflows[0].runningCount).toBe(0);
  });
});

describe('update, toggle, delete', () => {
  it('bumps version when nodes change, not when only enabled changes', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('One')]));
    const newNodes = [echoStep('One'), echoStep('Two', { n: 2 })];
    const updated = await svc.api.put(wf(`/${created.id}`), { nodes: newNodes });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.version).toBe(2);
    expect(updated.body.nodes.map((n: any) => n.name)).toEqual(['One', 'Two']);
    expect(updated.body.name).toBe(created.name);
    expect(updated.body.createdAt).toBe(created.createdAt);
    expect(Date.parse(updated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));

    const enabled = await svc.api.put(wf(`/${created.id}`), { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, version: 2 });

    const described = await svc.api.put(wf(`/${created.id}`), { description: 'now described', canvas: { viewport: { x: -120, y: 40, zoom: 0.8 } } });
    expect(described.body).toMatchObject({ version: 3, description: 'now described', canvas: { viewport: { x: -120, y: 40, zoom: 0.8 } }, enabled: true });

    const detail = await svc.api.get(wf(`/${created.id}`));
    expect(detail.body).toEqual(described.body);
  });

  it('rejects a PUT with invalid nodes and leaves the stored definition unchanged', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('Keep')]));
    const response = await svc.api.put(wf(`/${created.id}`), {
      name: uniqueName('renamed'),
      nodes: [{ name: 'Broken', nodeType: 'parallel', children: [echoStep('Only')] }],
    });
    expect(response.status).toBe(400);
    expect(response.body.detail.error).toBe('invalid_request');
    expect(response.body.detail.message).toMatch(/Node 'Broken'/);
    const detail = await svc.api.get(wf(`/${created.id}`));
    expect(detail.body).toEqual(created);

    const unknownKey = await svc.api.put(wf(`/${created.id}`), { nodes: [{ name: 'Ghost', nodeType: 'step', executorKey: 'no-such-executor' }] });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.detail.message).toMatch(/Node 'Ghost'.*unknown executorKey 'no-such-executor'/);
    expect((await svc.api.get(wf(`/${created.id}`))).body).toEqual(created);
  });

  it('answers 409 duplicate_entry for a taken name on create and on rename', async () => {
    const first = await svc.createWorkflow(createBody([echoStep('A')]));
    const duplicate = await svc.api.post(wf(), createBody([echoStep('A')], { name: first.name }));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail.error).toBe('duplicate_entry');
    expect(duplicate.body.detail.message).toContain(first.name);

    const second = await svc.createWorkflow(createBody([echoStep('B')]));
    const rename = await svc.api.put(wf(`/${second.id}`), { name: first.name });
    expect(rename.status).toBe(409);
    expect(rename.body.detail.error).toBe('duplicate_entry');
    expect((await svc.api.get(wf(`/${second.id}`))).body).toEqual(second);

    // Re-sending its own name is not a clash.
    const same = await svc.api.put(wf(`/${second.id}`), { name: second.name });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(second.version);

    // Only one workflow carries the name.
    const list = await svc.api.get(wf(`?query=${encodeURIComponent(first.name)}`));
    expect(list.body.pagination.total).toBe(1);
  });

  it('lets exactly one of several concurrent creates with the same name win', async () => {
    const name = uniqueName('race');
    const responses = await Promise.all(Array.from({ length: 6 }, () => svc.api.post(wf(), createBody([echoStep('A')], { name }))));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(responses.filter((r) => r.status === 409).every((r) => r.body.detail.error === 'duplicate_entry')).toBe(true);
    expect((await svc.api.get(wf(`?query=${encodeURIComponent(name)}`))).body.pagination.total).toBe(1);
  });

  it('toggles enabled on and off without bumping version', async () => {
    const created = await svc.createWorkflow(createBody([echoStep('A')]));
    const on = await svc.api.post(wf(`/${created.id}/toggle`), { enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id: created.id, enabled: true, version: 1, name: created.name });
    expect((await svc.api.get(wf(`/${created.id}`))).body.enabled).toBe(true);
    const again = await svc.api.post(wf(`/${created.id}/toggle`), { enabled: true });
    expect(again.body.enabled).toBe(true);
    const off = await svc.api.post(wf(`/${created.id}/toggle`), { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, version: 1 });
    const list = await svc.api.get(wf(`?query=${encodeURIComponent(created.name)}`));
    expect(list.body.workflows[0].enabled).toBe(false);

    const missing = await svc.api.post(wf(`/${created.id}/toggle`), {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail.error).toBe('invalid_request');
  });

  it('deletes a workflow with its runs and node runs, leaving other workflows alone', async () => {
    const doomed = await svc.createWorkflow(createBody([echoStep('A'), echoStep('B')]));
    const kept = await svc.createWorkflow(createBody([echoStep('A')]));
    for (const w of [doomed, kept]) await svc.enable(w.id);
    const doomedRun = (await svc.trigger(doomed.id, { initialInput: { x: 1 } })).body.runId as string;
    const keptRun = (await svc.trigger(kept.id)).body.runId as string;
    const finished = await svc.waitForRun(doomed.id, doomedRun);
    expect(finished.status).toBe('completed');
    await svc.waitForRun(kept.id, keptRun);
    const nodeRunId = finished.nodeRuns[0].id as string;

    const deleted = await svc.api.delete(wf(`/${doomed.id}`));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');

    for (const path of [
      wf(`/${doomed.id}`),
      wf(`/${doomed.id}/runs`),
      wf(`/${doomed.id}/runs/${doomedRun}`),
      wf(`/${doomed.id}/runs/${doomedRun}/nodes`),
      wf(`/${doomed.id}/runs/${doomedRun}/nodes/${nodeRunId}`),
    ]) {
      const response = await svc.api.get(path);
      expect(response.status, path).toBe(404);
      expect(response.body.detail.error).toBe('resource_not_found');
    }
    expect((await svc.api.delete(wf(`/${doomed.id}`))).status).toBe(404);
    expect((await svc.api.get(wf(`?query=${encodeURIComponent(doomed.name)}`))).body.pagination.total).toBe(0);

    // The name is free again.
    const recreated = await svc.api.post(wf(), createBody([echoStep('A')], { name: doomed.name }));
    expect(recreated.status).toBe(201);
    expect(recreated.body.id).not.toBe(doomed.id);
    expect((await svc.api.get(wf(`/${recreated.body.id}/runs`))).body.runs).toEqual([]);

    const keptDetail = await svc.api.get(wf(`/${kept.id}/runs/${keptRun}`));
    expect(keptDetail.status).toBe(200);
    expect(keptDetail.body.nodeRuns).toHaveLength(1);
  });
});

describe('validation (spec endpoint 3 "Validation Rules" and the HumanReview matrix)', () => {
  const step = (name: string, extra: Record<string, unknown> = {}) => echoStep(name, {}, extra);
  const cases: Array<{ rule: string; nodes: unknown[]; message: RegExp }> = [
    { rule: 'step without executor', nodes: [{ name: 'NoExec', nodeType: 'step' }], message: /Node 'NoExec'.*needs? an executorKey or an a2aPool/ },
    {
      rule: 'step with both executorKey and a2aPool',
      nodes: [step('Both', { a2aPool: ['echo'] })],
      message: /Node 'Both'.*either executorKey or a2aPool, not both/,
    },
    {
      rule: 'a2aPool of 6',
      nodes: [{ name: 'BigPool', nodeType: 'step', a2aPool: ['echo', 'flaky', 'sleep', 'builtin.echo', 'builtin.fail', 'builtin.sleep'] }],
      message: /Node 'BigPool'.*at most 5/,
    },
    { rule: 'unknown executorKey', nodes: [{ name: 'Ghost', nodeType: 'step', executorKey: 'mcp-email-validator' }], message: /Node 'Ghost'.*unknown executorKey 'mcp-email-validator'/ },
    {
      rule: 'unknown a2aPool entry',
      nodes: [{ name: 'Pool', nodeType: 'step', a2aPool: ['echo', 'account-manager-v1'] }],
      message: /Node 'Pool'.*account-manager-v1/,
    },
    { rule: 'parallel with 1 child', nodes: [{ name: 'Par', nodeType: 'parallel', children: [step('Only')] }], message: /Node 'Par'.*at least 2 children/ },
    {
      rule: 'parallel with an executorKey',
      nodes: [{ name: 'ParExec', nodeType: 'parallel', executorKey: 'echo', children: [step('A'), step('B')] }],
      message: /Node 'ParExec'.*executorKey/,
    },
    {
      rule: 'condition without trueSteps',
      nodes: [{ name: 'Cond', nodeType: 'condition', conditionCel: 'true', falseSteps: [step('F')] }],
      message: /Node 'Cond'.*trueSteps/,
    },
    { rule: 'condition without conditionCel', nodes: [{ name: 'NoCel', nodeType: 'condition', trueSteps: [step('T')] }], message: /Node 'NoCel'.*conditionCel/ },
    {
      rule: 'condition with children',
      nodes: [{ name: 'CondKids', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], children: [step('C')] }],
      message: /Node 'CondKids'.*children/,
    },
    { rule: 'loop without loopConfig', nodes: [{ name: 'Loop', nodeType: 'loop', children: [step('Body')] }], message: /Node 'Loop'.*loopConfig/ },
    { rule: 'loop without children', nodes: [{ name: 'EmptyLoop', nodeType: 'loop', loopConfig: { maxIterations: 2 } }], message: /Node 'EmptyLoop'.*child/ },
    {
      rule: 'loop with trueSteps',
      nodes: [{ name: 'LoopT', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('Body')], trueSteps: [step('T')] }],
      message: /Node 'LoopT'.*trueSteps/,
    },
    {
      rule: 'router with 1 choice',
      nodes: [{ name: 'R1', nodeType: 'router', conditionCel: "'a'", choices: [{ name: 'a', steps: [step('A')] }] }],
      message: /Node 'R1'.*at least 2 choices/,
    },
    {
      rule: 'router with duplicate choice names',
      nodes: [{ name: 'RDup', nodeType: 'router', conditionCel: "'a'", choices: [{ name: 'a', steps: [step('A1')] }, { name: 'a', steps: [step('A2')] }] }],
      message: /Node 'RDup'.*duplicate.*'a'/,
    },
    {
      rule: 'router with an empty choice',
      nodes: [{ name: 'REmpty', nodeType: 'router', conditionCel: "'a'", choices: [{ name: 'a', steps: [step('A')] }, { name: 'b', steps: [] }] }],
      message: /Node 'REmpty'.*'b'.*at least 1 step/,
    },
    {
      rule: 'router without conditionCel',
      nodes: [{ name: 'RNoCel', nodeType: 'router', choices: [{ name: 'a', steps: [step('A')] }, { name: 'b', steps: [step('B')] }] }],
      message: /Node 'RNoCel'.*conditionCel/,
    },
    {
      rule: 'stepConfig on a condition',
      nodes: [{ name: 'CondCfg', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], stepConfig: { maxRetries: 1 } }],
      message: /Node 'CondCfg'.*stepConfig/,
    },
    {
      rule: 'stepConfig on a router',
      nodes: [{ name: 'RCfg', nodeType: 'router', conditionCel: "'a'", stepConfig: { maxRetries: 1 }, choices: [{ name: 'a', steps: [step('A')] }, { name: 'b', steps: [step('B')] }] }],
      message: /Node 'RCfg'.*stepConfig/,
    },
    { rule: 'step with children', nodes: [step('StepKids', { children: [step('X')] })], message: /Node 'StepKids'.*children/ },
    { rule: 'no nodes', nodes: [], message: /at least one root node/ },
    {
      rule: 'CEL syntax error in conditionCel',
      nodes: [{ name: 'Syntax', nodeType: 'condition', conditionCel: "input.customerType == 'enterprise", trueSteps: [step('T')] }],
      message: /Node 'Syntax'.*conditionCel.*syntax/i,
    },
    {
      rule: 'undeclared CEL variable in conditionCel',
      nodes: [{ name: 'Undeclared', nodeType: 'condition', conditionCel: "customer.type == 'enterprise'", trueSteps: [step('T')] }],
      message: /Node 'Undeclared'.*conditionCel.*unknown variable 'customer'/,
    },
    {
      rule: 'undeclared CEL variable in a $cel argument',
      nodes: [step('Arg', { config: { to: { $cel: 'inputs.email' } } })],
      message: /Node 'Arg'.*config\.to.*unknown variable 'inputs'/,
    },
    {
      rule: 'CEL syntax error in endConditionCel',
      nodes: [{ name: 'LoopEnd', nodeType: 'loop', loopConfig: { maxIterations: 2, endConditionCel: 'loop_state.iteration >=' }, children: [step('Body')] }],
      message: /Node 'LoopEnd'.*endConditionCel.*syntax/i,
    },
    {
      rule: 'step_choices outside a router',
      nodes: [{ name: 'NoChoices', nodeType: 'condition', conditionCel: 'size(step_choices) > 0', trueSteps: [step('T')] }],
      message: /Node 'NoChoices'.*unknown variable 'step_choices'/,
    },
    {
      rule: 'requiresIterationReview on a step',
      nodes: [step('Iter', { humanReview: { requiresIterationReview: true } })],
      message: /Node 'Iter'.*requiresIterationReview/,
    },
    {
      rule: 'requiresOutputReview on a condition',
      nodes: [{ name: 'CondReview', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], humanReview: { requiresOutputReview: true } }],
      message: /Node 'CondReview'.*requiresOutputReview/,
    },
    {
      rule: 'requiresUserInput on a loop',
      nodes: [{ name: 'LoopInput', nodeType: 'loop', loopConfig: { maxIterations: 1 }, children: [step('B')], humanReview: { requiresUserInput: true } }],
      message: /Node 'LoopInput'.*requiresUserInput/,
    },
    {
      rule: 'any humanReview on a parallel',
      nodes: [{ name: 'ParReview', nodeType: 'parallel', children: [step('A'), step('B')], humanReview: { requiresConfirmation: true } }],
      message: /Node 'ParReview'.*humanReview/,
    },
    {
      rule: 'onReject else_branch on a step',
      nodes: [step('Else', { humanReview: { requiresConfirmation: true, onReject: 'else_branch' } })],
      message: /Node 'Else'.*else_branch/,
    },
    {
      rule: 'a problem deep in a branch names the nested node and its path',
      nodes: [
        echoStep('Top'),
        {
          name: 'Outer',
          nodeType: 'condition',
          conditionCel: 'true',
          trueSteps: [{ name: 'Inner', nodeType: 'parallel', children: [step('Ok'), { name: 'Deep', nodeType: 'step', executorKey: 'nope' }] }],
        },
      ],
      message: /Node 'Deep' \(nodes\[1\]\.trueSteps\[0\]\.children\[1\]\).*unknown executorKey 'nope'/,
    },
  ];

  it.each(cases)('400 invalid_request: $rule', async ({ nodes, message }) => {
    const name = uniqueName('invalid');
    await expectInvalid(createBody(nodes, { name }), message);
    // Nothing was stored.
    expect((await svc.api.get(wf(`?query=${encodeURIComponent(name)}`))).body.pagination.total).toBe(0);
  });

  it.each([
    { rule: 'zoom 0', body: { canvas: { viewport: { x: 0, y: 0, zoom: 0 } } }, message: /zoom/ },
    { rule: 'negative zoom', body: { canvas: { viewport: { zoom: -1 } } }, message: /zoom/ },
    { rule: 'missing canvas', body: { canvas: undefined }, message: /canvas/ },
    { rule: 'missing name', body: { name: undefined }, message: /name/ },
    { rule: 'empty name', body: { name: '' }, message: /name/ },
    { rule: 'unknown nodeType', body: { nodes: [{ name: 'X', nodeType: 'bogus', executorKey: 'echo' }] }, message: /nodeType/ },
    { rule: 'node without name', body: { nodes: [{ nodeType: 'step', executorKey: 'echo' }] }, message: /name/ },
    { rule: 'loop maxIterations 0', body: { nodes: [{ name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 0 }, children: [echoStep('B')] }] }, message: /maxIterations/ },
    { rule: 'negative maxRetries', body: { nodes: [echoStep('S', {}, { stepConfig: { maxRetries: -1 } })] }, message: /maxRetries/ },
    { rule: 'backoffBaseSeconds 0', body: { nodes: [echoStep('S', {}, { stepConfig: { backoffBaseSeconds: 0 } })] }, message: /backoffBaseSeconds/ },
    { rule: 'unknown onError', body: { nodes: [echoStep('S', {}, { stepConfig: { onError: 'explode' } })] }, message: /onError/ },
  ])('400 invalid_request on a malformed body: $rule', async ({ body, message }) => {
    await expectInvalid({ ...createBody([echoStep('A')]), ...body }, message);
  });

  it('accepts the HumanReview matrix where the spec allows it', async () => {
    const created = await svc.createWorkflow(
      createBody([
        step('Confirm', { humanReview: { requiresConfirmation: true, confirmationMessage: 'Go?' } }),
        {
          name: 'Cond',
          nodeType: 'condition',
          conditionCel: 'true',
          trueSteps: [step('T')],
          falseSteps: [step('F')],
          humanReview: { requiresConfirmation: true, onReject: 'else_branch' },
        },
        { name: 'Loop', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [step('B')], humanReview: { requiresIterationReview: true } },
      ]),
    );
    expect(created.nodes[0].humanReview).toMatchObject({ requiresConfirmation: true, confirmationMessage: 'Go?', requiresUserInput: false });
    expect(created.nodes[1].humanReview).toMatchObject({ onReject: 'else_branch' });
    expect(created.nodes[2].humanReview).toMatchObject({ requiresIterationReview: true });
  });

  it('lists every problem at once in detail.problems', async () => {
    const detail = await expectInvalid(
      createBody([
        { name: 'NoExec', nodeType: 'step' },
        { name: 'Par', nodeType: 'parallel', children: [step('Only')] },
        { name: 'Cond', nodeType: 'condition', conditionCel: 'inputs.x', trueSteps: [{ name: 'Ghost', nodeType: 'step', executorKey: 'nope' }] },
      ]),
      /^Invalid workflow definition: 4 problems: /,
    );
    expect(detail.problems).toHaveLength(4);
    const all = detail.problems.join('\n');
    expect(all).toMatch(/Node 'NoExec' \(nodes\[0\]\)/);
    expect(all).toMatch(/Node 'Par' \(nodes\[1\]\).*at least 2 children/);
    expect(all).toMatch(/Node 'Cond' \(nodes\[2\]\).*conditionCel.*unknown variable 'inputs'/);
    expect(all).toMatch(/Node 'Ghost' \(nodes\[2\]\.trueSteps\[0\]\).*unknown executorKey 'nope'/);
    for (const problem of detail.problems) expect(detail.message).toContain(problem);
  });
});
