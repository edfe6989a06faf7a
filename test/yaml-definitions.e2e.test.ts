/**
 * YAML workflow definitions over real HTTP (issue #21 item 4): create, update and validate take
 * YAML bodies with the limits and errors of JSON; GET /workflows/{id} answers YAML on
 * `Accept: application/yaml`; the examples' YAML twins are the JSON ones; YAML's own hazards
 * (aliases, tags, duplicate keys, several documents, deep nesting) are clear 4xx answers.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseYamlDefinition } from '@switchyard/domain/yaml-definition';
import { toYamlText } from '../apps/api/src/plugins/yaml-reply.ts';
import { CANVAS, echoStep, startService, uniqueName, wf, type ApiResponse, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.close();
});

const EXAMPLES = ['customer-onboarding', 'multi-step-router', 'tree-shaped'];
const example = (name: string, ext: 'json' | 'yaml') => readFileSync(new URL(`../examples/workflows/${name}.${ext}`, import.meta.url), 'utf8');

/** POST/PUT `text` as YAML (`contentType` by default application/yaml). */
const sendYaml = (method: string, path: string, text: string, contentType = 'application/yaml') => svc.api.request(method, path, undefined, { raw: text, contentType });

/** GET `path` with `accept`; the body parsed as YAML when the answer is YAML. */
async function getWith(path: string, accept: string | undefined): Promise<ApiResponse & { type: string }> {
  const response = await fetch(`${svc.baseUrl}${path}`, { headers: accept === undefined ? {} : { accept } });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, text, headers: response.headers, type, body: type.startsWith('application/yaml') ? parseYaml(text) : JSON.parse(text) };
}

/** A stored definition without what differs between two creations of it (ids and times). */
function definitionOf(detail: Record<string, any>): unknown {
  return JSON.parse(JSON.stringify(detail), (key, value) => (['id', 'createdAt', 'updatedAt'].includes(key) ? undefined : value));
}

function expect400(response: ApiResponse, message: RegExp): void {
  expect(response.status, response.text.slice(0, 300)).toBe(400);
  expect(response.body.detail.error).toBe('invalid_request');
  expect(response.body.detail.message).toMatch(message);
}

describe('the examples in both forms', () => {
  it.each(EXAMPLES)('%s.yaml parses to exactly %s.json, and creating from it stores the same definition', async (name) => {
    const json = JSON.parse(example(name, 'json'));
    expect(parseYamlDefinition(example(name, 'yaml'))).toStrictEqual(json);
    // The committed twin is what the writer makes of the JSON (regenerate both together).
    expect(example(name, 'yaml').replace(/^#.*\n/, '')).toBe(toYamlText(json));

    const fromJson = await svc.api.post(wf(), json);
    expect(fromJson.status, fromJson.text).toBe(201);
    await svc.api.delete(wf(`/${fromJson.body.id}`));
    const fromYaml = await sendYaml('POST', wf(), example(name, 'yaml'));
    expect(fromYaml.status, fromYaml.text).toBe(201);
    expect(fromYaml.body.name).toBe(json.name);
    expect(definitionOf(fromYaml.body)).toEqual(definitionOf(fromJson.body));
    await svc.api.delete(wf(`/${fromYaml.body.id}`));
  });

  it('every YAML media type is accepted, with or without charset=utf-8', async () => {
    for (const type of ['application/yaml', 'application/x-yaml', 'text/yaml', 'application/yaml; charset=utf-8', 'text/yaml;charset=UTF-8']) {
      const response = await sendYaml('POST', wf('/validate'), example('tree-shaped', 'yaml'), type);
      expect(response.status, `${type}: ${response.text}`).toBe(200);
      expect(response.body).toEqual({ valid: true, problems: [] });
    }
  });
});

describe('GET /workflows/{id} with Accept: application/yaml', () => {
  it('answers the JSON answer as YAML, which parses back deep-equal and creates the same definition again', async () => {
    const created = await svc.createWorkflow(JSON.parse(example('customer-onboarding', 'json')));
    const path = wf(`/${created.id}`);
    const json = await getWith(path, undefined);
    expect(json.type).toMatch(/^application\/json/);
    const yaml = await getWith(path, 'application/yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.type).toBe('application/yaml; charset=utf-8');
    expect(yaml.headers.get('vary')).toMatch(/Accept/);
    expect(yaml.body).toEqual(json.body);
    expect(parseYamlDefinition(yaml.text)).toEqual(json.body);

    // The definition fields of the YAML answer are a create body as they are.
    const definition = parseYaml(yaml.text);
    const body = { name: uniqueName('again'), description: definition.description, canvas: definition.canvas, nodes: definition.nodes, tags: definition.tags };
    const again = await sendYaml('POST', wf(), toYamlText(body));
    expect(again.status, again.text).toBe(201);
    expect(again.body.nodes).toEqual(json.body.nodes);
  });

  it('negotiates: */*, no header and JSON-first lists get JSON; x-yaml, text/yaml and YAML-first lists get YAML', async () => {
    const { id } = await svc.createWorkflow({ name: uniqueName('neg'), canvas: CANVAS, nodes: [echoStep('A')] });
    const typeFor = async (accept: string | undefined) => (await getWith(wf(`/${id}`), accept)).type;
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, application/yaml', 'text/html', 'application/yaml;q=0.1, application/json']) {
      expect(await typeFor(accept), String(accept)).toMatch(/^application\/json/);
    }
    for (const accept of ['application/x-yaml', 'text/yaml', 'application/yaml, application/json;q=0.5', 'text/*']) {
      expect(await typeFor(accept), accept).toBe('application/yaml; charset=utf-8');
    }
    // Errors stay JSON.
    const missing = await getWith(wf('/0123456789abcdef01234567'), 'application/yaml');
    expect(missing.status).toBe(404);
    expect(missing.body.detail.error).toBe('resource_not_found');
  });

  it('strings that look like other scalars stay strings through the round trip', async () => {
    const tricky = ['2024-01-01', 'yes', 'no', 'on', 'null', '~', '0x1F', '0o17', '1e3', '.inf', '.NaN', '12', '-0', 'true', '', ' lead', 'a: b', '- x', '#c', "'q'", '"d"', '@at', '%p', '*star', '&amp', '!bang', '|', '>', '\ttab', 'multi\nline\n', 'ünïcode ☃'];
    const { id } = await svc.createWorkflow({ name: uniqueName('tricky'), canvas: CANVAS, nodes: [echoStep('A', { tricky })] });
    const yaml = await getWith(wf(`/${id}`), 'application/yaml');
    expect(yaml.body.nodes[0].config.tricky).toEqual(tricky);
    const update = await sendYaml('PUT', wf(`/${id}`), toYamlText({ nodes: yaml.body.nodes }));
    expect(update.status, update.text).toBe(200);
    expect(update.body.version).toBe(1);
  });
});

describe('errors are those of the equivalent JSON body', () => {
  const bad = () => ({ name: uniqueName('bad'), canvas: CANVAS, nodes: [{ name: 'A', nodeType: 'step', executorKey: 'no-such-executor' }, { name: 'C', nodeType: 'condition', conditionCel: 'input.x ==' }] });

  it('validate and create report the same problems', async () => {
    const body = bad();
    const viaJson = await svc.api.post(wf('/validate'), body);
    const viaYaml = await sendYaml('POST', wf('/validate'), toYamlText(body));
    expect(viaJson.body.valid).toBe(false);
    expect(viaYaml.body).toEqual(viaJson.body);
    const createdJson = await svc.api.post(wf(), body);
    const createdYaml = await sendYaml('POST', wf(), toYamlText(body));
    expect(createdJson.status).toBe(400);
    expect(createdYaml.status).toBe(400);
    expect(createdYaml.body).toEqual(createdJson.body);
  });

  it.each([
    ['an unknown property', { name: 'x', canvas: CANVAS, nodes: [], color: 'red' }],
    ['a missing property', { name: 'x', canvas: CANVAS }],
    ['a top-level list', [1, 2]],
    ['a __proto__ key', JSON.parse('{"name":"x","canvas":{"viewport":{"x":0,"y":0,"zoom":1}},"nodes":[],"__proto__":{"polluted":true}}')],
    ['nesting 130 levels deep', { name: 'x', canvas: CANVAS, nodes: [echoStep('A', { deep: JSON.parse(`${'['.repeat(126)}${']'.repeat(126)}`) })] }],
  ])('%s: the same 400', async (_label, body) => {
    const viaJson = await svc.api.post(wf(), body);
    const viaYaml = await sendYaml('POST', wf(), toYamlText(body));
    expect(viaJson.status).toBe(400);
    expect(viaYaml.status).toBe(400);
    expect(viaYaml.body).toEqual(viaJson.body);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an update with problems is refused as from JSON and changes nothing', async () => {
    const { id } = await svc.createWorkflow({ name: uniqueName('upd'), canvas: CANVAS, nodes: [echoStep('A')] });
    const nodes = bad().nodes;
    const viaJson = await svc.api.put(wf(`/${id}`), { nodes });
    const viaYaml = await sendYaml('PUT', wf(`/${id}`), toYamlText({ nodes }));
    expect(viaYaml.status).toBe(400);
    expect(viaYaml.body).toEqual(viaJson.body);
    expect((await svc.api.get(wf(`/${id}`))).body.version).toBe(1);
    const fine = await sendYaml('PUT', wf(`/${id}`), 'description: changed\n', 'text/yaml');
    expect(fine.status, fine.text).toBe(200);
    expect(fine.body.description).toBe('changed');
  });
});

describe('malformed and hostile YAML', () => {
  const head = `name: ${uniqueName('hostile')}\ncanvas: {viewport: {x: 0, y: 0, zoom: 1}}\n`;

  it.each([
    ['a syntax error', `${head}nodes: [\n  {name: A, nodeType: step\n`, /^YAML line \d+, column \d+: /],
    ['bad indentation', `${head}nodes:\n  - name: A\n nodeType: step\n`, /^YAML line 5, column \d+: /],
    ['a duplicate key', `${head}nodes: []\nname: again\n`, /^YAML line 4, column 1: the key 'name' appears twice in one mapping$/],
    ['two documents', `${head}nodes: []\n---\n${head}nodes: []\n`, /^YAML line 4, column 1: the body holds more than one YAML document/],
    ['a !!js/function tag', `${head}nodes: []\ndescription: !!js/function 'function () {}'\n`, /^YAML line 4, column 14: Unresolved tag: tag:yaml.org,2002:js\/function \(only the tags of the YAML 1.2 core schema/],
    ['a !!binary tag', `${head}nodes: []\ndescription: !!binary aGVsbG8=\n`, /^YAML line 4, column 14: .*binary/],
    ['a !!timestamp tag', `${head}nodes: []\ndescription: !!timestamp 2024-01-01\n`, /^YAML line 4, column 14: .*timestamp/],
    ['a custom tag', `${head}nodes: []\ndescription: !secret x\n`, /^YAML line 4, column 14: Unresolved tag: !secret/],
    ['.inf', `${head}nodes: [{name: A, nodeType: step, executorKey: echo, config: {n: .inf}}]\n`, /^YAML line 3, column 66: '.inf' is not a number JSON can hold$/],
    ['a collection as key', `${head}nodes: []\n? [a, b]\n: c\n`, /^YAML line 4, column 3: a mapping key must be a scalar/],
    ['an alias without anchor', `${head}nodes: *missing\n`, /^YAML line 3, column 8: the alias \*missing has no anchor/],
    ['flow nesting 1,000,000 deep', `${head}nodes: ${'['.repeat(1_000_000)}`, /^YAML line 3, column \d+: the document nests deeper than 128 levels$/],
    ['block nesting 200 deep', `${head}nodes:\n${Array.from({ length: 200 }, (_, i) => `${' '.repeat(i + 1)}- `).join('\n')}x\n`, /nests deeper than 128 levels/],
    ['only a comment', '# nothing here\n', /body must be object/],
    ['only whitespace', '  \n\n', /holds no YAML document/],
  ])('%s is a 400 naming the place', async (_label, text, message) => {
    expect400(await sendYaml('POST', wf(), text), message);
  });

  it('a date-looking or boolean-looking value stays what the core schema says: a string for dates, yes and no', async () => {
    const response = await sendYaml('POST', wf(), `${head.replace('hostile', 'dates')}description: 2024-01-01\ntags: [yes, no, 2024-01-01T10:00:00Z]\nnodes: [{name: A, nodeType: step, executorKey: echo}]\n`);
    expect(response.status, response.text).toBe(201);
    expect(response.body.description).toBe('2024-01-01');
    expect(response.body.tags).toEqual(['yes', 'no', '2024-01-01T10:00:00Z']);
  });

  it('anchors and aliases work, copied rather than shared, up to 100 expansions; a "billion laughs" is a 400', async () => {
    const shared = `${head.replace('hostile', 'aliases')}nodes:\n  - &step {name: A, nodeType: step, executorKey: echo, config: &cfg {k: 1}}\n  - {name: B, nodeType: step, executorKey: echo, config: *cfg}\n`;
    const created = await sendYaml('POST', wf(), shared);
    expect(created.status, created.text).toBe(201);
    expect(created.body.nodes.map((node: any) => node.config)).toEqual([{ k: 1 }, { k: 1 }]);

    const laughs = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 9; i++) laughs.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    expect400(await sendYaml('POST', wf(), `${head}nodes: []\ndescription: {${laughs.join(', ')}}\n`), /^YAML line \d+, column \d+: more than 100 alias expansions/);
    expect400(await sendYaml('POST', wf(), `${head}nodes: []\nx: &x y\ntags: [${Array(101).fill('*x').join(', ')}]\n`), /more than 100 alias expansions/);
  });

  it('aliases expanding beyond twice the body limit are a 413, as an oversized body is', async () => {
    const text = `${head}nodes: []\ndescription: &big "${'x'.repeat(900_000)}"\ntags: [${Array(3).fill('*big').join(', ')}]\n`;
    const response = await sendYaml('POST', wf(), text);
    expect(response.status).toBe(413);
    expect(response.body.detail).toEqual({ error: 'request_too_large', message: 'The request body, with its YAML aliases expanded, is larger than 2097152 bytes as JSON (2 times the body limit)' });
  });

  it('a body over 1 MiB is a 413 with a JSON error, as for JSON', async () => {
    const response = await sendYaml('POST', wf(), `${head}nodes: []\ndescription: ${'x'.repeat(1024 * 1024)}\n`);
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body.detail.error).toBe('request_too_large');
  });

  it('bytes that are not UTF-8 are a 400; a charset other than UTF-8 is a 415', async () => {
    const latin1 = Buffer.concat([Buffer.from(`${head}nodes: []\ndescription: caf`), Buffer.from([0xe9]), Buffer.from('\n')]);
    const notUtf8 = await fetch(`${svc.baseUrl}${wf()}`, { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: latin1 });
    expect(notUtf8.status).toBe(400);
    expect(await notUtf8.json()).toEqual({ detail: { error: 'invalid_request', message: 'The request body is not valid UTF-8' } });
    const declared = await sendYaml('POST', wf(), `${head}nodes: []\n`, 'application/yaml; charset=iso-8859-1');
    expect(declared.status).toBe(415);
    expect(declared.body.detail).toEqual({ error: 'unsupported_media_type', message: "Unsupported charset 'iso-8859-1': YAML bodies must be UTF-8" });
  });

  it('only the definition routes take YAML: a run trigger or a toggle in YAML is a 415 saying JSON', async () => {
    const { id } = await svc.createWorkflow({ name: uniqueName('only'), canvas: CANVAS, nodes: [echoStep('A')] });
    for (const path of [wf(`/${id}/toggle`), wf(`/${id}/runs`)]) {
      const response = await sendYaml('POST', path, 'enabled: true\n');
      expect(response.status, path).toBe(415);
      expect(response.body.detail.message).toBe('Unsupported Content-Type: request bodies must be application/json');
    }
    const plain = await sendYaml('POST', wf(), '<name>x</name>', 'application/xml');
    expect(plain.status).toBe(415);
    expect(plain.body.detail.message).toBe('Unsupported Content-Type: request bodies must be one of application/json, application/yaml, application/x-yaml, text/yaml');
  });
});

describe('parsing off the event loop (parser threads)', () => {
  /** A top-level flow sequence of about `kib` KiB: seconds of parsing per MiB, then refused at once by schema validation (not an object). */
  const slowBody = (kib: number) => `[${'1, '.repeat(Math.floor((kib * 1024) / 3))}1]\n`;

  /** The longest event-loop stall of this process (the service runs in it), ms, while `run` runs: the longest gap between ticks of a 5 ms interval, less 5 ms. */
  async function longestStallMs(run: () => Promise<unknown>): Promise<number> {
    let last = performance.now();
    let longest = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last - 5);
      last = now;
    }, 5);
    try {
      await run();
      // A stall at the very end is seen by the next tick.
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      clearInterval(ticker);
    }
    return longest;
  }

  it('a large YAML body does not stall the service: the longest stall is a fraction of parsing on the event loop', async () => {
    const inline = await startService({ edge: { yamlParser: { threads: 0 } } });
    const threaded = await startService({ edge: { yamlParser: { threads: 1 } } });
    try {
      const body = slowBody(256);
      const stalls: Record<string, number> = {};
      for (const [name, service] of [['threaded', threaded], ['inline', inline], ['threaded again', threaded]] as const) {
        stalls[name] = await longestStallMs(async () => {
          const response = await service.api.request('POST', wf('/validate'), undefined, { raw: body, contentType: 'application/yaml' });
          expect(response.status).toBe(400);
          expect(response.body.detail.message).toBe('Invalid request: body must be object');
        });
      }
      console.log(`longest event-loop stall during one 256 KiB YAML body: ${JSON.stringify(stalls)} (ms)`);
      // The first threaded body also starts the thread; the second is the steady state.
      expect(stalls['inline']).toBeGreaterThan(300);
      expect(stalls['threaded again']).toBeLessThan(stalls['inline']! / 4);
    } finally {
      await Promise.all([inline.close(), threaded.close()]);
    }
  });

  it('bodies beyond the threads and the queue are refused with 503 too_busy and Retry-After; the others are parsed', async () => {
    const busy = await startService({ edge: { yamlParser: { threads: 1, queue: 1 } } });
    try {
      const body = slowBody(256);
      const answers = await Promise.all(Array.from({ length: 5 }, () => busy.api.request('POST', wf('/validate'), undefined, { raw: body, contentType: 'application/yaml' })));
      const refused = answers.filter((answer) => answer.status === 503);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(answers.length - refused.length).toBeGreaterThanOrEqual(2);
      for (const answer of refused) {
        expect(answer.headers.get('retry-after')).toBe('1');
        expect(answer.body.detail).toEqual({ error: 'too_busy', message: expect.stringMatching(/^The service cannot parse another YAML body now \(.*\); retry in a moment, or send JSON$/) });
      }
      for (const answer of answers.filter((a) => a.status !== 503)) expect(answer.body.detail.message).toBe('Invalid request: body must be object');
      // A JSON body is never queued behind YAML.
      expect((await busy.api.post(wf('/validate'), { name: 'x', canvas: CANVAS, nodes: [echoStep('A')] })).status).toBe(200);
    } finally {
      await busy.close();
    }
  });

  it('a body whose parse runs out of time is a 413 saying so', async () => {
    const hurried = await startService({ edge: { yamlParser: { timeoutMs: 50 } } });
    try {
      const response = await hurried.api.request('POST', wf('/validate'), undefined, { raw: slowBody(1000), contentType: 'application/yaml' });
      expect(response.status).toBe(413);
      expect(response.body.detail).toEqual({
        error: 'request_too_large',
        message: 'The YAML body took longer than 50 ms to parse; send a smaller or simpler document (or JSON)',
      });
    } finally {
      await hurried.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents the YAML request bodies and the YAML answer of the detail', () => {
    const document = JSON.parse(readFileSync(new URL('../openapi/openapi.json', import.meta.url), 'utf8'));
    const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((item) => Object.values(item));
    const byId = (id: string) => operations.find((operation) => operation.operationId === id);
    for (const id of ['createWorkflow', 'updateWorkflow', 'validateWorkflow']) {
      expect(Object.keys(byId(id).requestBody.content), id).toEqual(['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml']);
    }
    expect(Object.keys(byId('getWorkflow').responses['200'].content)).toEqual(['application/json', 'application/yaml', 'application/x-yaml', 'text/yaml']);
    expect(Object.keys(byId('triggerRun')?.requestBody.content ?? { 'application/json': 1 })).toEqual(['application/json']);
  });
});
