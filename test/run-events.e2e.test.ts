/**
 * Run events over HTTP: the paged list (`GET .../events`) and the live stream
 * (`GET .../events/stream`, Server-Sent Events) with resume by `Last-Event-ID`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANVAS, echoStep, startService, uniqueName, wf, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc.close();
});

interface StreamedEvent {
  id: string;
  event: string;
  data: { seq: number; type: string; nodeId?: string; payload: Record<string, unknown> };
}

/**
 * Reads the SSE stream at `path` until `until` holds for an event (then disconnects) or the
 * server ends the stream; returns the events and whether the server ended it.
 */
async function readStream(path: string, headers: Record<string, string> = {}, until?: (event: StreamedEvent) => boolean): Promise<{ events: StreamedEvent[]; ended: boolean; contentType: string | null }> {
  const controller = new AbortController();
  const response = await fetch(`${svc.baseUrl}${path}`, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: StreamedEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events, ended: true, contentType: response.headers.get('content-type') };
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(block.split('\n').filter((line) => !line.startsWith(':') && line.includes(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]));
      if (fields.data === undefined) continue; // a keep-alive comment
      const event = { id: fields.id, event: fields.event, data: JSON.parse(fields.data) } as StreamedEvent;
      events.push(event);
      if (until?.(event)) {
        controller.abort();
        await reader.cancel().catch(() => undefined);
        return { events, ended: false, contentType: response.headers.get('content-type') };
      }
    }
  }
}

describe('GET .../runs/{run_id}/events', () => {
  it('lists a run\'s events in seq order without gaps, with filters', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('events'), canvas: CANVAS, nodes: [echoStep('A'), echoStep('B')] });
    const base = wf(`/${workflowId}/runs/${run.id}/events`);
    const all = await svc.api.get(base);
    expect(all.status).toBe(200);
    expect(all.body.runId).toBe(run.id);
    const events = all.body.events;
    expect(events.map((e: any) => e.seq)).toEqual(events.map((_: unknown, i: number) => i + 1));
    expect(events.map((e: any) => e.type)).toEqual(['run.started', 'node.started', 'node.completed', 'node.started', 'node.completed', 'run.completed']);
    expect(events[1]).toMatchObject({ nodeId: run.nodeRuns[0].nodeId, payload: { nodeName: 'A', attempt: 1 } });
    expect(Date.parse(events[0].timestamp)).not.toBeNaN();

    expect((await svc.api.get(`${base}?afterSeq=4`)).body.events.map((e: any) => e.seq)).toEqual([5, 6]);
    expect((await svc.api.get(`${base}?limit=2`)).body.events.map((e: any) => e.seq)).toEqual([1, 2]);
    expect((await svc.api.get(`${base}?types=node.completed,run.completed`)).body.events.map((e: any) => e.seq)).toEqual([3, 5, 6]);
    const nodeB = run.nodeRuns[1].nodeId;
    expect((await svc.api.get(`${base}?nodeId=${nodeB}`)).body.events.map((e: any) => e.type)).toEqual(['node.started', 'node.completed']);
  });

  it('answers 400 for unknown types and limits over 1000, 404 for an unknown run', async () => {
    const { workflowId, run } = await svc.runWorkflow({ name: uniqueName('events errors'), canvas: CANVAS, nodes: [echoStep('A')] });
    const base = wf(`/${workflowId}/runs/${run.id}/events`);
    const unknownType = await svc.api.get(`${base}?types=node.exploded`);
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.detail.message).toMatch(/unknown event types: node.exploded/);
    expect((await svc.api.get(`${base}?limit=1001`)).status).toBe(400);
    expect((await svc.api.get(wf(`/${workflowId}/runs/${'0'.repeat(24)}/events`))).status).toBe(404);
    expect((await svc.api.get(wf(`/${workflowId}/runs/nope/events`))).status).toBe(400);
  });
});

describe('GET .../runs/{run_id}/events/stream', () => {
  it('streams events live, resumes after Last-Event-ID and ends after the final event', async () => {
    const { workflowId, runId } = await svc.startRun({
      name: uniqueName('stream'),
      canvas: CANVAS,
      nodes: [{ ...echoStep('Gate'), id: 'gate', humanReview: { requiresConfirmation: true } }, echoStep('After')],
    });
    const path = wf(`/${workflowId}/runs/${runId}/events/stream`);
    const first = await readStream(path, {}, (event) => event.event === 'run.awaiting_approval');
    expect(first.contentType).toMatch(/^text\/event-stream/);
    expect(first.ended).toBe(false);
    expect(first.events.map((e) => e.event)).toEqual(['run.started', 'requirement.raised', 'run.awaiting_approval']);
    expect(first.events.map((e) => e.id)).toEqual(['1', '2', '3']);
    expect(first.events[1]?.data).toMatchObject({ seq: 2, type: 'requirement.raised', nodeId: 'gate', payload: { stepId: 'gate' } });

    expect((await svc.approve(workflowId, runId, { stepId: 'gate', resolution: 'confirm' })).status).toBe(200);
    const rest = await readStream(path, { 'last-event-id': '3' });
    expect(rest.ended).toBe(true);
    const types = rest.events.map((e) => e.event);
    expect(types[0]).toBe('requirement.decided');
    expect(types.at(-1)).toBe('run.completed');
    expect(rest.events.map((e) => Number(e.id))).toEqual(rest.events.map((_, i) => 4 + i));

    const replayed = await readStream(`${path}?afterSeq=5`);
    expect(replayed.ended).toBe(true);
    expect(replayed.events[0]?.data.seq).toBe(6);
  });

  it('answers 404 for an unknown run and 406 without Accept: text/event-stream, with the common error body', async () => {
    const created = await svc.createWorkflow({ name: uniqueName('stream 404'), canvas: CANVAS, nodes: [echoStep('A')] });
    const path = `${svc.baseUrl}${wf(`/${created.id}/runs/${'0'.repeat(24)}/events/stream`)}`;
    const missing = await fetch(path, { headers: { accept: 'text/event-stream' } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).detail.error).toBe('resource_not_found');
    const notStream = await fetch(path, { headers: { accept: '*/*' } });
    expect(notStream.status).toBe(406);
    expect(((await notStream.json()) as any).detail.message).toMatch(/Accept: text\/event-stream/);
  });

  it('ends open streams when the service closes, so a graceful shutdown does not wait for them', async () => {
    const other = await startService();
    const { workflowId, runId } = await other.startRun({ name: uniqueName('stream shutdown'), canvas: CANVAS, nodes: [{ ...echoStep('G'), id: 'g', humanReview: { requiresConfirmation: true } }] });
    await other.waitForGate(workflowId, runId);
    const response = await fetch(`${other.baseUrl}${wf(`/${workflowId}/runs/${runId}/events/stream`)}`, { headers: { accept: 'text/event-stream' } });
    const reader = response.body!.getReader();
    await reader.read(); // the stream is open and has sent the backlog
    await other.close(); // would wait until the run ends if open streams held it
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
  });
});
