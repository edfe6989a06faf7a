/**
 * Typed errors with stable codes (spec "Error Response Format"). Code anywhere throws them; each
 * edge maps them once: the API's error handler to HTTP `{ detail: { error, message } }`, the MCP
 * bridge to its own codes.
 */

/** Stable error codes of the REST contract. */
export type ErrorCode =
  | 'invalid_request'
  | 'resource_not_found'
  | 'duplicate_entry'
  | 'conflict'
  | 'internal_error'
  | 'database_error';

/** Base class: `code` is the API's `detail.error`, `status` the HTTP status it maps to. */
export class SwitchyardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Individual problems (e.g. every validation failure), shown as `detail.problems`. */
  readonly problems?: string[];
  constructor(code: ErrorCode, status: number, message: string, options: { problems?: string[]; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    if (options.problems && options.problems.length > 0) this.problems = options.problems;
  }
}

/** 400 `invalid_request`: the request is malformed or violates a rule. */
export class InvalidRequestError extends SwitchyardError {
  constructor(message: string, problems?: string[]) {
    super('invalid_request', 400, message, { problems });
  }
}

/** 404 `resource_not_found`: `what` names the missing thing ("Workflow", "Run", "Node run"). */
export class NotFoundError extends SwitchyardError {
  constructor(what: string) {
    super('resource_not_found', 404, `${what} not found`);
  }
}

/** 409 `duplicate_entry`: a unique field (e.g. the workflow name) is already taken. */
export class DuplicateEntryError extends SwitchyardError {
  constructor(message: string) {
    super('duplicate_entry', 409, message);
  }
}

/** 409 `conflict`: the resource is not in a state that allows the operation. */
export class ConflictError extends SwitchyardError {
  constructor(message: string) {
    super('conflict', 409, message);
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
