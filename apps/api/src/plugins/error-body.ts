/**
 * The common error body `{ detail: { error, message, problems?, resource?, details? } }` and the
 * codes of errors that the HTTP layer (Node's parser, Fastify) raises rather than our own code.
 * Every path that answers with an error — the Fastify error handler, router-level errors,
 * raw-socket client errors — builds its body here, so all of them look the same.
 */
import type { ErrorBody } from '@switchyard/domain';

/**
 * Codes of HTTP-level errors, by status. Any other 4xx is `invalid_request`, any other 5xx
 * `internal_error`.
 */
export const HTTP_ERROR_CODES: Readonly<Record<number, string>> = {
  401: 'authentication_required',
  403: 'permission_denied',
  404: 'resource_not_found',
  408: 'request_timeout',
  413: 'request_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  503: 'service_unavailable',
};

/** The error code of an HTTP-level error answered with `status`. */
export function errorCodeForStatus(status: number): string {
  return HTTP_ERROR_CODES[status] ?? (status >= 400 && status < 500 ? 'invalid_request' : 'internal_error');
}

/** The optional fields of an error body's `detail`. */
export type ErrorExtras = Omit<ErrorBody['detail'], 'error' | 'message'>;

/** The common error body; extras that are undefined are left out. */
export function errorBody(error: string, message: string, extras: ErrorExtras = {}): ErrorBody {
  const detail: ErrorBody['detail'] = { error, message };
  if (extras.problems !== undefined) detail.problems = extras.problems;
  if (extras.resource !== undefined) detail.resource = extras.resource;
  if (extras.details !== undefined) detail.details = extras.details;
  return { detail };
}
