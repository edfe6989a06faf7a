/** A run's event timeline: the events listed on load, then appended live from the stream. */
import { api, runPath } from '../../api.ts';
import type { RunEvent } from '../../live.ts';
import { Json, formatTime } from '../../ui.tsx';

/** Most events one GET …/events returns. */
const PAGE = 1000;

/** Every event of the run so far, page by page (`afterSeq`), in seq order. */
export async function loadAllEvents(workflowId: string, runId: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await api<{ events: RunEvent[] }>('GET', runPath(workflowId, runId, `/events?afterSeq=${afterSeq}&limit=${PAGE}`));
    all.push(...page.events);
    if (page.events.length < PAGE) return all;
    afterSeq = page.events[page.events.length - 1]!.seq;
  }
}

/** `events` with `more` merged in: one per seq, in seq order. */
export function mergeEvents(events: RunEvent[], more: RunEvent[]): RunEvent[] {
  const bySeq = new Map<number, RunEvent>();
  for (const event of events) bySeq.set(event.seq, event);
  for (const event of more) bySeq.set(event.seq, event);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** An event's time (`timestamp`, ISO-8601). */
function eventTime(event: RunEvent): string | undefined {
  return typeof event.timestamp === 'string' ? event.timestamp : undefined;
}

/** A short line about an event's payload: its node, status, decision, error. */
export function summarizeEvent(event: RunEvent): string {
  const p = (event.payload ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);
  const parts: string[] = [];
  const node = text(p['nodeName']) ?? text(p['nodeId']) ?? text(event['nodeId']);
  if (node) parts.push(text(p['nodeId']) && p['nodeName'] ? `${p['nodeName']} (${p['nodeId']})` : node);
  if (text(p['iterationPath'])) parts.push(`iteration ${p['iterationPath']}`);
  if (typeof p['attempt'] === 'number' && p['attempt'] > 1) parts.push(`attempt ${p['attempt']}`);
  if (text(p['stepId']) && p['stepId'] !== p['nodeId']) parts.push(`gate ${p['stepId']}`);
  if (text(p['directive'])) parts.push(String(p['directive']));
  if (text(p['resolution'])) parts.push(String(p['resolution']));
  if (text(p['decidedBy'])) parts.push(`by ${p['decidedBy']}`);
  const who = p['requestedBy'] as { username?: string | null; userId?: string | null } | undefined;
  if (who && typeof who === 'object') parts.push(`by ${who.username ?? who.userId ?? 'api'}`);
  if (text(p['reason'])) parts.push(`reason: ${p['reason']}`);
  if (typeof p['delayMs'] === 'number') parts.push(`retry in ${Math.round(p['delayMs'] / 100) / 10} s`);
  if (text(p['error'])) parts.push(`error: ${p['error']}`);
  if (text(p['errorSummary'])) parts.push(String(p['errorSummary']));
  return parts.join(' · ');
}

/** The timeline table: seq, time, type, summary, payload. */
export function Timeline({ events }: { events: RunEvent[] }) {
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <div class="table-wrap">
      <table class="timeline stack-table">
        <thead>
          <tr>
            <th scope="col">Seq</th>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Summary</th>
            <th scope="col">Payload</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.seq}>
              <td data-label="Seq">{event.seq}</td>
              <td data-label="Time">{formatTime(eventTime(event))}</td>
              <td data-label="Type">
                <span class="mono">{event.type}</span>
              </td>
              <td data-label="Summary">{summarizeEvent(event)}</td>
              <td data-label="Payload">
                <Json label="Payload" value={event.payload} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

