/**
 * Typed errors with stable codes (spec "Error Response Format"). Code anywhere throws them; each
 * edge maps them once: the API's error handler to HTTP `{ detail: { error, message, problems?,
 * resource?, details? } }`, the MCP bridge to its own codes (from `code` and `resource`, never
 * from the message).
 */

/** Stable error codes of the REST contract. */
export type ErrorCode =
  | 'invalid_request'
  | 'resource_not_found'
  | 'duplicate_entry'
  | 'conflict'
  | 'limit_reached'
  | 'document_too_large'
  | 'authentication_required'
  | 'permission_denied'
  | 'not_an_approver'
  | 'self_approval_forbidden'
  | 'internal_error'
  | 'database_error'
  | 'rate_limited'
  | 'too_busy';

/** Structured facts about an error (e.g. `{ currentStatus: 'running' }`), shown as `detail.details`. */
export type ErrorDetails = Record<string, unknown>;

/** Options of {@link SwitchyardError}. */
export interface SwitchyardErrorOptions {
  /** Individual problems (e.g. every validation failure), shown as `detail.problems`. */
  problems?: string[];
  /** Shown as `detail.details`. */
  details?: ErrorDetails;
  cause?: unknown;
}

/** Base class: `code` is the API's `detail.error`, `status` the HTTP status it maps to. */
export class SwitchyardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Individual problems (e.g. every validation failure), shown as `detail.problems`. */
  readonly problems?: string[];
  /** Structured facts about the error, shown as `detail.details`. */
  readonly details?: ErrorDetails;
  constructor(code: ErrorCode, status: number, message: string, options: SwitchyardErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    if (options.problems && options.problems.length > 0) this.problems = options.problems;
    if (options.details) this.details = options.details;
  }
}

/**
 * 503 `too_busy`: the instance has no capacity left for this kind of work right now (e.g. every
 * YAML parser thread busy and the queue full); nothing was done. Retry after `retryAfterSeconds`
 * (the API sends it as Retry-After), or on another instance.
 */
export class TooBusyError extends SwitchyardError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super('too_busy', 503, message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 400 `invalid_request`: the request is malformed or violates a rule. */
export class InvalidRequestError extends SwitchyardError {
  constructor(message: string, problems?: string[]) {
    super('invalid_request', 400, message, { problems });
  }
}

/** What a 404 `resource_not_found` says is missing (`detail.resource`). */
export const NOT_FOUND_RESOURCES = ['workflow', 'run', 'node', 'node_run', 'requirement', 'schedule', 'event'] as const;
export type NotFoundResource = (typeof NOT_FOUND_RESOURCES)[number];

/** How messages name each resource: "Run not found". */
const RESOURCE_NAMES: Readonly<Record<NotFoundResource, string>> = {
  workflow: 'Workflow',
  run: 'Run',
  node: 'Node',
  node_run: 'Node run',
  requirement: 'Requirement',
  schedule: 'Schedule',
  event: 'Event',
};

/** Options of {@link NotFoundError}. */
export interface NotFoundOptions {
  /** Names the missing thing in the message instead of the resource's name, e.g. "Parent run". */
  name?: string;
  /** Shown as `detail.details`, e.g. `{ stepId }` when the request body named the missing thing. */
  details?: ErrorDetails;
}

/**
 * 404 `resource_not_found`: `resource` says what is missing (`detail.resource`); the message is
 * "<Name> not found" ("Run not found", "Node run not found").
 */
export class NotFoundError extends SwitchyardError {
  readonly resource: NotFoundResource;
  constructor(resource: NotFoundResource, options: NotFoundOptions = {}) {
    super('resource_not_found', 404, `${options.name ?? RESOURCE_NAMES[resource]} not found`, { details: options.details });
    this.resource = resource;
  }
}

/** 409 `duplicate_entry`: a unique field (e.g. the workflow name) is already taken. */
export class DuplicateEntryError extends SwitchyardError {
  constructor(message: string) {
    super('duplicate_entry', 409, message);
  }
}

/**
 * 409 `conflict`: the resource is not in a state that allows the operation. `details` (shown as
 * `detail.details`) says which state, e.g. `{ currentStatus: 'running' }`.
 */
export class ConflictError extends SwitchyardError {
  constructor(message: string, details?: ErrorDetails) {
    super('conflict', 409, message, { details });
  }
}

/**
 * 400 `invalid_request` for a value over its size limit (run-bounds.ts): the message names the
 * field, its size and the limit; `details: { field, bytes, limitBytes }` (bytes of JSON text, UTF-8).
 */
export class ValueTooLargeError extends SwitchyardError {
  constructor(field: string, bytes: number, limitBytes: number, note = '') {
    super('invalid_request', 400, `${field} is ${bytes} bytes of JSON, over the limit of ${limitBytes} bytes${note}`, {
      details: { field, bytes, limitBytes },
    });
  }
}

/**
 * 409 `limit_reached`: a per-run cap refuses the operation (run-bounds.ts); `details: { limit,
 * max, current }` says which cap (`limit`: e.g. `openHumanRequests`), its value and where the run
 * stands. Retrying helps only once the run's state changed (e.g. open human requests answered).
 */
export class LimitReachedError extends SwitchyardError {
  constructor(message: string, details: { limit: string; max: number; current: number }) {
    super('limit_reached', 409, message, { details });
  }
}

/**
 * 409 `document_too_large`: the write would make a stored document larger than the store accepts
 * (MongoDB's 16 MiB); nothing was written. A smaller value (e.g. a decision without edited output)
 * may still fit.
 */
export class DocumentTooLargeConflictError extends SwitchyardError {
  constructor(message: string, options: SwitchyardErrorOptions = {}) {
    super('document_too_large', 409, message, options);
  }
}

/**
 * 401 `authentication_required`: no credentials, or credentials that do not verify (a bad
 * signature, an expired token, an unknown API key). The message says which, never echoing the
 * credential.
 */
export class AuthenticationError extends SwitchyardError {
  constructor(message: string) {
    super('authentication_required', 401, message);
  }
}

/**
 * 403 `permission_denied`: the caller is known but lacks the scope the route requires;
 * `details: { requiredScope, grantedScopes }`.
 */
export class PermissionDeniedError extends SwitchyardError {
  constructor(requiredScope: string, grantedScopes: readonly string[]) {
    super('permission_denied', 403, `This request requires the scope '${requiredScope}'`, { details: { requiredScope, grantedScopes: [...grantedScopes] } });
  }
}

/** True for a 24-hex-digit string, the API form of a MongoDB ObjectId. */
export function isObjectIdHex(value: string): boolean {
  return /^[0-9a-f]{24}$/i.test(value);
}

/**
 * Throws InvalidRequestError (400) unless `value` is a 24-hex id.
 * `label` names it in the message, e.g. "workflow ID".
 */
export function assertObjectIdHex(value: string, label: string): void {
  if (!isObjectIdHex(value)) throw new InvalidRequestError(`Invalid ${label}: '${value}' is not a 24-character hex id`);
}
