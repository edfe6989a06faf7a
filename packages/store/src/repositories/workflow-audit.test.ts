/**
 * The `workflow_audit` repository (embedded store in memory): entries round-trip with their
 * actor and payload, pages come newest first (ties on `created_at` broken by id), per workflow.
 */
import { describe, expect, it } from 'vitest';
import type { Actor } from '@switchyard/domain';
import { newId } from './documents.ts';
import { useInMemoryRepositories } from '../testing/in-memory-repositories.ts';

const db = useInMemoryRepositories();
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
const ADA: Actor = { userId: 'u-1', username: 'ada', via: 'jwt' };

describe('WorkflowAudit', () => {
  it('lists one workflow’s entries newest first, with ties on the time in insertion order reversed, and totals', async () => {
    const workflowId = newId();
    const other = newId();
    await db.repos.audit.append({ workflowId, type: 'workflow.created', actor: ADA, payload: { name: 'w', version: 1 }, createdAt: at(0) });
    await db.repos.audit.append({ workflowId: other, type: 'workflow.created', actor: ADA, payload: { name: 'x', version: 1 }, createdAt: at(1) });
    await db.repos.audit.append({ workflowId, type: 'workflow.toggled', actor: ADA, payload: { enabled: true }, createdAt: at(5) });
    const access = { owners: ['user:u-1'], editors: [], operators: ['*'], viewers: ['group:a.b$c'] };
    const changed = await db.repos.audit.append({ workflowId, type: 'access.changed', actor: ADA, payload: { before: access, after: { ...access, editors: ['user:u-2'] } }, createdAt: at(5) });

    const first = await db.repos.audit.list(workflowId, 1, 2);
    expect(first.total).toBe(3);
    expect(first.items).toEqual([changed, expect.objectContaining({ type: 'workflow.toggled', payload: { enabled: true }, createdAt: at(5) })]);
    expect((await db.repos.audit.list(workflowId, 2, 2)).items).toEqual([
      expect.objectContaining({ workflowId, type: 'workflow.created', actor: ADA, payload: { name: 'w', version: 1 }, createdAt: at(0) }),
    ]);
    expect((await db.repos.audit.list(newId(), 1, 20))).toEqual({ items: [], total: 0 });
  });

  it('keeps a creation entry in the new definition (one write) until flushOutbox moves it, once, in order before later entries', async () => {
    const at0 = at(0);
    const created = await db.repos.definitions.create({ name: 'outboxed', description: null, canvas: { viewport: {} } as never, nodes: [], access: { owners: ['user:u-1'], editors: [], operators: [], viewers: [] } }, at0, {
      type: 'workflow.created',
      actor: ADA,
      payload: { name: 'outboxed', version: 1 },
      createdAt: at0,
    });
    expect(await db.repos.audit.list(created.id, 1, 10)).toEqual({ items: [], total: 0 });
    // The record shows nothing of the outbox.
    expect(Object.keys((await db.repos.definitions.get(created.id))!)).not.toContain('auditOutbox');

    expect(await db.repos.audit.flushOutbox(created.id)).toBe(1);
    expect(await db.repos.audit.flushOutbox(created.id)).toBe(0);
    await db.repos.audit.append({ workflowId: created.id, type: 'workflow.toggled', actor: ADA, payload: { enabled: true }, createdAt: at(1) });
    const { items } = await db.repos.audit.list(created.id, 1, 10);
    expect(items.map((item) => item.type)).toEqual(['workflow.toggled', 'workflow.created']);
    expect(items[1]).toMatchObject({ workflowId: created.id, actor: ADA, payload: { name: 'outboxed', version: 1 }, createdAt: at0 });
    expect(await db.repos.audit.flushOutbox(newId())).toBe(0);
  });

  it('a move interrupted after the insert (the entry already in the trail) completes without a second copy', async () => {
    const created = await db.repos.definitions.create({ name: 'half-moved', description: null, canvas: { viewport: {} } as never, nodes: [], access: { owners: ['user:u-1'], editors: [], operators: [], viewers: [] } }, at(0), {
      type: 'workflow.created',
      actor: ADA,
      payload: { name: 'half-moved', version: 1 },
      createdAt: at(0),
    });
    const [pending] = (await db.store.collection('workflow_definitions').findOne({ name: 'half-moved' }))!.audit_outbox as Array<Record<string, unknown>>;
    await db.store.collection('workflow_audit').insertOne({ ...pending! });
    expect(await db.repos.audit.flushOutbox(created.id)).toBe(1);
    expect((await db.repos.audit.list(created.id, 1, 10)).total).toBe(1);
  });
});
