/** A run's event timeline: the events listed on load, then appended live from the stream. */
import { api, runPath } from '../../api.ts';
import type { RunEvent } from '../../live.ts';
import { Json, formatTime } from '../../ui.tsx';

/** Most events one GET …/events returns. */
const PAGE = 1000;

/** Most pages listed when the page opens (the stream goes on from the last one listed). */
const MAX_PAGES = 5;

/** Most events kept and shown: the newest (a long loop run has tens of thousands). */
export const MAX_SHOWN_EVENTS = 2_000;

/**
 * The run's events from the first, page by page (`afterSeq`), at most {@link MAX_PAGES} pages,
 * in seq order; `complete` is false when there are more (the stream brings them).
 */
export async function loadEvents(workflowId: string, runId: string): Promise<{ events: RunEvent[]; complete: boolean }> {
  const all: RunEvent[] = [];
  let afterSeq = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const listed = await api<{ events: RunEvent[] }>('GET', runPath(workflowId, runId, `/events?afterSeq=${afterSeq}&limit=${PAGE}`));
    all.push(...listed.events);
    if (listed.events.length < PAGE) return { events: all, complete: true };
    afterSeq = listed.events[listed.events.length - 1]!.seq;
  }
  return { events: all, complete: false };
}

/**
 * `events` with `more` merged in: one per seq, in seq order, the newest {@link MAX_SHOWN_EVENTS}.
 * Events newer than the last (the live case) are appended without re-sorting.
 */
export function mergeEvents(events: RunEvent[], more: RunEvent[]): RunEvent[] {
  const last = events.length === 0 ? 0 : events[events.length - 1]!.seq;
  let merged: RunEvent[];
  if (more.every((event) => event.seq > last)) {
    merged = events.concat([...more].sort((a, b) => a.seq - b.seq));
  } else {
    const bySeq = new Map<number, RunEvent>();
    for (const event of events) bySeq.set(event.seq, event);
    for (const event of more) bySeq.set(event.seq, event);
    merged = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }
  return merged.length > MAX_SHOWN_EVENTS ? merged.slice(merged.length - MAX_SHOWN_EVENTS) : merged;
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

