/**
 * Live updates from a run's Server-Sent Events stream (GET …/runs/{id}/events/stream), read with
 * `fetch` (@microsoft/fetch-event-source) so that the credential travels as a header, never in the
 * URL (EventSource cannot send headers). The stream ends by itself after the run's final event.
 */
import { useEffect, useRef } from 'preact/hooks';
import { fetchEventSource } from '@microsoft/fetch-event-source';
import { authHeaders, runPath } from './api.ts';

/** One run event as the stream sends it (the run event view: `seq`, `type`, `payload`, `timestamp`, …). */
export interface RunEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  timestamp: string;
  [field: string]: unknown;
}

/** Event types after which a run's stream has nothing more to say. */
const FINAL_EVENT_TYPES = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** Answers that will not change by retrying: no access, no such run, not an event stream. */
const FINAL_STATUSES = new Set([401, 403, 404, 406]);

/**
 * Quick reconnects in a row that brought no new event before the console gives up on a stream
 * (the service ends the stream of an ended run that has no final event after a grace period).
 */
const MAX_IDLE_RECONNECTS = 5;

/** A stream open this long, ms, that the server then ended was not idle (its lifetime was over). */
const LONG_LIVED_MS = 30_000;

/** First and longest wait before reconnecting, ms (doubling in between). */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

/** Options of {@link useRunEvents}. */
export interface RunEventsOptions {
  /**
   * Start after this seq (the events listed already); null: not yet (the stream waits until the
   * caller knows where to start); default 0 (the whole history first).
   */
  afterSeq?: number | null;
}

/**
 * Follows the events of run `runId` of `workflowId` while the component is mounted (none when
 * either is null), calling `onEvent` for each. The server ends a stream after the run's final
 * event — and also when the stream's lifetime is over, the credential expires or the service
 * restarts: then the console reconnects from the last event seen (`Last-Event-ID`), waiting 1 s,
 * 2 s, … up to 30 s, also after a 429 (too many streams) or a 5xx. It stops for good after the
 * final event, on 401/403/404/406, and after {@link MAX_IDLE_RECONNECTS} reconnects in a row
 * that brought nothing new. A hidden tab closes its stream and reopens it when shown again (a
 * browser has only six connections per origin for every tab together).
 */
export function useRunEvents(workflowId: string | null, runId: string | null, onEvent: (event: RunEvent) => void, options: RunEventsOptions = {}): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const afterSeq = options.afterSeq === undefined ? 0 : options.afterSeq;
  useEffect(() => {
    if (workflowId === null || runId === null || afterSeq === null) return;
    const controller = new AbortController();
    let stop = false;
    let finished = false;
    let idleReconnects = 0;
    let delay = FIRST_RETRY_MS;
    let lastSeq = afterSeq;
    let openedAt = 0;
    void fetchEventSource(runPath(workflowId, runId, `/events/stream${afterSeq > 0 ? `?afterSeq=${afterSeq}` : ''}`), {
      headers: { accept: 'text/event-stream', ...authHeaders() },
      signal: controller.signal,
      openWhenHidden: false,
      async onopen(response) {
        openedAt = Date.now();
        if (response.ok) return;
        if (FINAL_STATUSES.has(response.status)) stop = true;
        throw new Error(`event stream answered ${response.status}`);
      },
      onmessage(message) {
        if (message.data === '') return;
        let event: RunEvent;
        try {
          event = JSON.parse(message.data) as RunEvent;
        } catch {
          return; // a malformed message is skipped
        }
        if (typeof event.seq === 'number' && event.seq > lastSeq) {
          lastSeq = event.seq;
          idleReconnects = 0;
          delay = FIRST_RETRY_MS;
        }
        if (FINAL_EVENT_TYPES.has(event.type)) finished = true;
        handler.current(event);
      },
      onclose() {
        if (finished) stop = true;
        // A stream that lived a while was ended on purpose (its lifetime, a restart): not idle.
        else if (Date.now() - openedAt < LONG_LIVED_MS) idleReconnects++;
        else idleReconnects = 0;
        throw new Error('event stream closed');
      },
      onerror(error) {
        if (stop || finished || idleReconnects > MAX_IDLE_RECONNECTS) throw error;
        const wait = delay;
        delay = Math.min(delay * 2, MAX_RETRY_MS);
        return wait;
      },
    }).catch(() => undefined);
    return () => controller.abort();
  }, [workflowId, runId, afterSeq]);
}
