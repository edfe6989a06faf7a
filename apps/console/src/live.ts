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

/**
 * Follows the events of run `runId` of `workflowId` while the component is mounted (none when
 * either is null), calling `onEvent` for each. Reconnects after a dropped connection from the last
 * event seen (`Last-Event-ID`), and stops on a 4xx answer (no access, no such run) or when the
 * server ends the stream.
 */
export function useRunEvents(workflowId: string | null, runId: string | null, onEvent: (event: RunEvent) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (workflowId === null || runId === null) return;
    const controller = new AbortController();
    let ended = false;
    void fetchEventSource(runPath(workflowId, runId, '/events/stream'), {
      headers: { accept: 'text/event-stream', ...authHeaders() },
      signal: controller.signal,
      openWhenHidden: true,
      async onopen(response) {
        if (response.status >= 400 && response.status < 500) {
          ended = true;
          throw new Error(`event stream refused: ${response.status}`);
        }
      },
      onmessage(message) {
        if (message.data === '') return;
        try {
          handler.current(JSON.parse(message.data) as RunEvent);
        } catch {
          // a malformed message is skipped
        }
      },
      onclose() {
        ended = true;
        // Ended by the server after the run's final event: do not reconnect.
        throw new Error('stream ended');
      },
      onerror(error) {
        if (ended) throw error;
        return 2_000; // retry after 2 s
      },
    }).catch(() => undefined);
    return () => controller.abort();
  }, [workflowId, runId]);
}
