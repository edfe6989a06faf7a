/**
 * The result of every tool (issue #8 "Results"; spec mcp-semantic-tools.md "Structured tool
 * envelope"): `{ ok, data?, error?: { code, message, details?, docsUrl? } }` as
 * `structuredContent`, echoed as one text block, `isError: true` on failures. Errors of the REST
 * API map to stable codes from its error body's fields (`detail.error`, `detail.resource`), never
 * from message text.
 */
import * as z from 'zod/v4';
import { ApiError, ApiUnavailableError } from './api-client.ts';

/** The stable error codes of the bridge. */
export const ERROR_CODES = [
  'WORKFLOW_NOT_FOUND',
  'RUN_NOT_FOUND',
  'NODE_NOT_FOUND',
  'REQUIREMENT_NOT_FOUND',
  'SCHEDULE_NOT_FOUND',
  'INVALID_INPUT',
  'CONFLICT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'UNAVAILABLE',
  'INTERNAL_ERROR',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** A failure a tool reports on purpose (bad input it found, an ambiguous approval). */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** `error` of the envelope. */
export const ErrorSchema = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).nullable().optional(),
  docsUrl: z.string().nullable().optional(),
});
export type EnvelopeError = z.infer<typeof ErrorSchema>;

/** The output schema of a tool whose `data` is `data`. */
export function envelopeSchema<T extends z.ZodType>(data: T) {
  return z.object({ ok: z.boolean(), data: data.optional(), error: ErrorSchema.optional() });
}

/** What a tool call returns over MCP. */
export interface ToolCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** A success envelope as an MCP result. */
export function success(data: unknown): ToolCallResult {
  const structuredContent = { ok: true, data };
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
}

/** A failure envelope as an MCP result (`isError: true`). */
export function failure(error: EnvelopeError): ToolCallResult {
  const structuredContent = { ok: false, error };
  return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError: true };
}

const NOT_FOUND: Record<string, ErrorCode> = {
  workflow: 'WORKFLOW_NOT_FOUND',
  run: 'RUN_NOT_FOUND',
  node: 'NODE_NOT_FOUND',
  node_run: 'NODE_NOT_FOUND',
  requirement: 'REQUIREMENT_NOT_FOUND',
  schedule: 'SCHEDULE_NOT_FOUND',
};

/**
 * Maps anything a tool threw to the envelope's error. An API error keeps the API's message and
 * carries `details: { status, apiError, ...detail.details, problems? }`. A 403 is `FORBIDDEN` with
 * the API's reason code also as `details.reason` and at the end of the message, e.g. "Only the
 * gate's approvers may decide step 'ship' (not_an_approver)" with `details.approvers` (issue #18
 * item 8; the reasons are `permission_denied` with `requiredRole`, `not_an_approver` with
 * `approvers`, `self_approval_forbidden`, or the scope check's `forbidden`).
 */
export function errorOf(error: unknown): EnvelopeError {
  if (error instanceof ToolError) return { code: error.code, message: error.message, details: error.details ?? null };
  if (error instanceof ApiUnavailableError) return { code: 'UNAVAILABLE', message: error.message, details: { url: error.url } };
  if (error instanceof ApiError) {
    const details: Record<string, unknown> = { status: error.status, apiError: error.code, ...(error.body.details ?? {}) };
    if (error.body.problems) details['problems'] = error.body.problems;
    if (error.status === 403) return { code: 'FORBIDDEN', message: `${error.message} (${error.code})`, details: { ...details, reason: error.code } };
    return { code: codeOf(error), message: error.message, details };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error), details: null };
}

function codeOf(error: ApiError): ErrorCode {
  if (error.status === 404) return (error.body.resource && NOT_FOUND[error.body.resource]) || 'RUN_NOT_FOUND';
  if (error.status === 401) return 'UNAUTHORIZED';
  if (error.status === 403) return 'FORBIDDEN';
  if (error.status === 409) return 'CONFLICT';
  if (error.status === 503 || error.status === 429) return 'UNAVAILABLE'; // retry later (429: rate limited)
  if (error.status >= 400 && error.status < 500) return 'INVALID_INPUT';
  return 'INTERNAL_ERROR';
}

/** Describes zod issues as "field: problem; ..." naming each field by its path. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): { message: string; fields: string[] } {
  const fields = issues.map((issue) => (issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)'));
  const message = issues.map((issue, i) => `${fields[i]}: ${issue.message}`).join('; ');
  return { message: `Invalid arguments: ${message}`, fields };
}
