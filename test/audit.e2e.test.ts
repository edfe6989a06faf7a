/**
 * The workflow audit trail (issue #18 item 6; docs/guide/audit.md) through the real app over
 * HTTP: what create, update, toggle and delete record (and what no-op calls do not), the actor,
 * versions, newest-first pages and their bounds, the admins' read after a delete, the actor of an
 * API key (never the key), and a failed audit write answering 500 after the change was stored
 * (a delete still removes the workflow's runs).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator, SCOPES, newApiKey } from '@switchyard/api';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

const audit = (workflowId: string, query = '') => wf(`/${workflowId}/audit${query}`);
const adminAudit = (query: string) => `/api/v1/audit${query}`;
const ANONYMOUS_ACTOR = { userId: 'anonymous', username: null, via: 'none' };

describe('audit trail without authentication', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('records create, each real update, each real toggle and the delete, newest first, and keeps them for admins after the delete', async () => {
    const name = uniqueName('audited');
    const created = await svc.createWorkflow({ name, canvas: CANVAS, nodes: [echoStep('A')] });
    const id = created.id as string;
    const renamed = `${name} v2`;
    expect((await svc.api.put(wf(`/${id}`), { name: renamed })).body.version).toBe(2);
    expect((await svc.api.put(wf(`/${id}`), { tags: ['nightly'] })).body.version).toBe(2);
    expect((await svc.api.put(wf(`/${id}`), { name: renamed, tags: ['nightly'] })).status).toBe(200); // changes nothing
    expect((await svc.api.post(wf(`/${id}/toggle`), { enabled: true })).status).toBe(200);
    expect((await svc.api.post(wf(`/${id}/toggle`), { enabled: true })).status).toBe(200); // already enabled

    const listed = await svc.api.get(audit(id));
    expect(listed.status).toBe(200);
    expect(listed.body.workflowId).toBe(id);
    expect(listed.body.pagination).toEqual({ total: 4, page: 1, perPage: 20, totalPages: 1 });
    expect(listed.body.entries.map((e: any) => [e.type, e.payload])).toEqual([
      ['workflow.toggled', { enabled: true }],
      ['workflow.updated', { fromVersion: 2, toVersion: 2, fields: ['tags'] }],
      ['workflow.updated', { fromVersion: 1, toVersion: 2, fields: ['name'] }],
      ['workflow.created', { name, version: 1 }],
    ]);
    for (const entry of listed.body.entries) {
      expect(entry).toMatchObject({ workflowId: id, actor: ANONYMOUS_ACTOR });
      expect(Date.parse(entry.createdAt)).not.toBeNaN();
    }

    // The store holds snake_case documents.
    const [doc] = await svc.store.collection('workflow_audit').find({ type: 'workflow.created' }, { sort: { _id: -1 }, limit: 1 });
    expect(doc).toMatchObject({ type: 'workflow.created', actor: { user_id: 'anonymous', username: null, via: 'none' }, payload: { name, version: 1 } });
    expect(String(doc!.workflow_id)).toBe(id);
    expect(doc!.created_at).toBeInstanceOf(Date);

    expect((await svc.api.delete(wf(`/${id}`))).status).toBe(204);
    const gone = await svc.api.get(audit(id));
    expect(gone.status).toBe(404);
    expect(gone.body.detail.resource).toBe('workflow');

    const kept = await svc.api.get(adminAudit(`?workflowId=${id}`));
    expect(kept.status).toBe(200);
    expect(kept.body.pagination.total).toBe(5);
    expect(kept.body.entries[0]).toMatchObject({ type: 'workflow.deleted', payload: { name: renamed }, actor: ANONYMOUS_ACTOR });
    expect(kept.body.entries.map((e: any) => e.type).slice(1)).toEqual(['workflow.toggled', 'workflow.updated', 'workflow.updated', 'workflow.created']);
  });

  it('pages newest first and refuses pages out of bounds', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('paged'), canvas: CANVAS, nodes: [echoStep('A')] });
    const id = created.id as string;
    for (const enabled of [true, false, true]) expect((await svc.api.post(wf(`/${id}/toggle`), { enabled })).status).toBe(200);

    const second = await svc.api.get(audit(id, '?page=2&perPage=3'));
    expect(second.status).toBe(200);
    expect(second.body.pagination).toEqual({ total: 4, page: 2, perPage: 3, totalPages: 2 });
    expect(second.body.entries.map((e: any) => e.type)).toEqual(['workflow.created']);
    const first = await svc.api.get(audit(id, '?perPage=3'));
    expect(first.body.entries.map((e: any) => e.payload.enabled)).toEqual([true, false, true]);
    expect((await svc.api.get(audit(id, '?perPage=100'))).body.entries).toHaveLength(4);
    expect((await svc.api.get(audit(id, '?page=9'))).body.entries).toEqual([]);

    for (const query of ['?perPage=0', '?perPage=101', '?page=0', '?perPage=-1', '?perPage=abc']) {
      const refused = await svc.api.get(audit(id, query));
      expect(refused.status, query).toBe(400);
      expect(refused.body.detail.error, query).toBe('invalid_request');
      expect((await svc.api.get(adminAudit(`?workflowId=${id}&${query.slice(1)}`))).status, query).toBe(400);
    }
    expect((await svc.api.get(adminAudit(''))).status).toBe(400); // workflowId is required
    expect((await svc.api.get(adminAudit('?workflowId=not-an-id'))).status).toBe(400);
    expect((await svc.api.get(audit('not-an-id'))).status).toBe(400);
    const unknown = '0123456789abcdef01234567';
    expect((await svc.api.get(audit(unknown))).status).toBe(404);
    expect((await svc.api.get(adminAudit(`?workflowId=${unknown}`))).body).toMatchObject({ entries: [], pagination: { total: 0 } });
  });

  it('answers 500 when the audit entry cannot be stored, with the change itself kept', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('audit-failure'), canvas: CANVAS, nodes: [echoStep('A')] });
    const id = created.id as string;
    const append = svc.repos.audit.append;
    svc.repos.audit.append = () => Promise.reject(new Error('disk full'));
    try {
      const failed = await svc.api.put(wf(`/${id}`), { description: 'changed' });
      expect(failed.status).toBe(500);
    } finally {
      svc.repos.audit.append = append;
    }
    expect((await svc.api.get(wf(`/${id}`))).body).toMatchObject({ description: 'changed', version: 2 });
    expect((await svc.api.get(audit(id))).body.entries.map((e: any) => e.type)).toEqual(['workflow.created']);
  });

  it('a creation keeps its entry when moving it to the trail fails: 201, and the entry shows at the next read, once', async () => {
    const flush = svc.repos.audit.flushOutbox;
    svc.repos.audit.flushOutbox = () => Promise.reject(new Error('disk full'));
    let id: string;
    try {
      const created = await svc.api.post(wf(''), { name: uniqueName('audit-outbox'), canvas: CANVAS, nodes: [echoStep('A')] });
      expect(created.status).toBe(201);
      id = created.body.id;
    } finally {
      svc.repos.audit.flushOutbox = flush;
    }
    expect((await svc.api.put(wf(`/${id}`), { description: 'changed' })).status).toBe(200);
    const entries = (await svc.api.get(audit(id))).body.entries.map((e: any) => e.type);
    expect(entries).toEqual(['workflow.updated', 'workflow.created']);
    expect((await svc.api.get(audit(id))).body.pagination.total).toBe(2);
  });

  it('still deletes the runs of a deleted workflow when its `workflow.deleted` entry cannot be stored', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('audit-failure-delete'), canvas: CANVAS, nodes: [echoStep('A')] });
    const append = svc.repos.audit.append;
    svc.repos.audit.append = () => Promise.reject(new Error('disk full'));
    try {
      expect((await svc.api.delete(wf(`/${workflowId}`))).status).toBe(500);
    } finally {
      svc.repos.audit.append = append;
    }
    expect((await svc.api.get(wf(`/${workflowId}`))).status).toBe(404);
    expect((await svc.api.get(`/api/v1/runs/${run.id}`)).status).toBe(404);
    expect(await svc.events(run.id)).toEqual([]);
  });
});

describe('audit trail with API keys', () => {
  let svc: TestService;
  let dir: string;
  const robot = newApiKey('ci-robot', [...SCOPES]);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-audit-keys-'));
    const file = join(dir, 'keys.json');
    await writeFile(file, JSON.stringify({ keys: [robot.entry] }));
    const authenticator = await Authenticator.create({ modes: ['api-key'], apiKeysFile: file, trustProxyIdentity: false });
    svc = await startService({ edge: { authenticator }, apiHeaders: { 'x-api-key': robot.key } });
  });
  afterAll(async () => {
    await svc.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("records the key's subject and name as the actor, never the key", async () => {
    const created = await svc.createWorkflow({ name: uniqueName('audited by key'), canvas: CANVAS, nodes: [echoStep('A')] });
    expect((await svc.api.post(wf(`/${created.id}/toggle`), { enabled: true })).status).toBe(200);
    const listed = await svc.api.get(audit(created.id));
    expect(listed.status).toBe(200);
    const actor = { userId: 'api-key:ci-robot', username: 'ci-robot', via: 'api-key' };
    expect(listed.body.entries).toMatchObject([
      { type: 'workflow.toggled', actor },
      { type: 'workflow.created', actor },
    ]);
    const docs = await svc.store.collection('workflow_audit').find({});
    expect(docs.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(docs)).not.toContain(robot.key);
    expect(JSON.stringify(docs)).not.toContain(robot.entry.sha256);
  });
});
