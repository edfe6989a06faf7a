/**
 * W3C trace context for outgoing executor requests (`http`, `a2a`, `mcp` over HTTP): the
 * `traceparent` (and `tracestate`) of the active span, which during an executor call is the
 * attempt's span (`tracing.ts`). Tracing off (no SDK registered): always empty, so requests are
 * unchanged.
 */
import { context, propagation } from '@opentelemetry/api';

/** The propagation headers of the active context (lower-case names), or `{}` when there is none or tracing is off. */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
