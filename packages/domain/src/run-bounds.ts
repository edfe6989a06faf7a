/**
 * Bounds on what a run document may accumulate (security issue, item 4: a flood of human requests
 * grew one run document to MongoDB's 16 MiB limit, after which no write to it — not even a gate's
 * decision — went through). Sizes are bytes of the value's JSON text (UTF-8, {@link jsonByteLength}).
 *
 * Per human request (constants: they are part of the API contract):
 * - `prompt` ≤ {@link MAX_HUMAN_REQUEST_PROMPT_BYTES}, `context` ≤ {@link MAX_HUMAN_REQUEST_CONTEXT_BYTES},
 *   `choices` ≤ {@link MAX_HUMAN_REQUEST_CHOICES_BYTES} (on top of the schema's character limits);
 * - the request as stored on the run (the requirement: prompt and context appear twice, alone and
 *   joined as the inbox message) ≤ {@link MAX_HUMAN_REQUEST_BYTES};
 * - its answer (`userInput`, `feedback` of the decision) ≤ {@link MAX_HUMAN_REQUEST_ANSWER_BYTES} each.
 *
 * Per decision on a gate the engine raised: `editedOutput`, `userInput` and `feedback` each ≤
 * `maxDecisionBytes` (default {@link DEFAULT_MAX_DECISION_BYTES}, `SWITCHYARD_MAX_DECISION_BYTES`).
 *
 * Per run (configurable, {@link RunBounds}), a new human request is refused (409 `limit_reached`)
 * when the run already has `maxOpenHumanRequests` undecided human requests, when it already stores
 * `maxStoredRequirements` requirements (gates and human requests, open or decided), or when the
 * run document with the new request, plus room for the answer of every open human request
 * ({@link HUMAN_REQUEST_ANSWER_RESERVE_BYTES} each), would exceed `humanRequestRunBudgetBytes`.
 * Engine-raised gates are never refused by these caps: a gate the definition raises always gets
 * stored while the document has room, so human requests can never make a gate undecidable.
 *
 * Why a run document stays under 16 MiB because of human requests: they are only added while the
 * document (JSON) is within the budget (default 8 MiB, at most 12 MiB) with their answers
 * reserved, so everything human requests ever add, answers included, fits in the budget; BSON of
 * these documents is within a few percent of their JSON (see run-bounds.test.ts), which leaves at
 * least 4 MiB (default: 8 MiB) to what the definition itself raises. With the defaults, 100 open
 * requests of the largest size take 100 × (64 + 16) KiB = 7.8 MiB, so the count cap and the budget
 * meet. What engine gates add (bounded by the definition: nodes × loop iterations × rounds, each
 * carrying at most `SWITCHYARD_MAX_OUTPUT_BYTES` of step output plus a decision of at most
 * `maxDecisionBytes`) is not capped here: should it reach 16 MiB, the store refuses the write, the
 * engine fails the run ("too large to store") and a decision that does not fit is a 409
 * `document_too_large` (a smaller decision, e.g. confirm, still fits).
 */
import { LimitReachedError, ValueTooLargeError } from './errors.ts';
import { jsonByteLength } from './json-size.ts';
import type { RequirementRecord } from './records.ts';

const KIB = 1024;
const MIB = 1024 * KIB;

/** MongoDB's largest document, bytes of BSON (the embedded store enforces it too). */
export const MAX_DOCUMENT_BYTES = 16 * MIB;

/** Largest `prompt` of a human request: 8 KiB of JSON (the schema allows 4 000 characters). */
export const MAX_HUMAN_REQUEST_PROMPT_BYTES = 8 * KIB;
/** Largest `context` of a human request: 32 KiB of JSON (the schema allows 20 000 characters). */
export const MAX_HUMAN_REQUEST_CONTEXT_BYTES = 32 * KIB;
/** Largest `choices` of a human request, the whole array: 32 KiB of JSON. */
export const MAX_HUMAN_REQUEST_CHOICES_BYTES = 32 * KIB;
/** Largest human request as stored on the run (its requirement): 64 KiB of JSON. */
export const MAX_HUMAN_REQUEST_BYTES = 64 * KIB;
/** Largest answer to a human request (`userInput`, `feedback` of its decision, each): 12 KiB of JSON. */
export const MAX_HUMAN_REQUEST_ANSWER_BYTES = 12 * KIB;
/**
 * Room kept on the run for the decision of each open human request: the answer plus the
 * decision's other fields (resolution, dates, a picked choice of at most 500 characters): 16 KiB.
 */
export const HUMAN_REQUEST_ANSWER_RESERVE_BYTES = MAX_HUMAN_REQUEST_ANSWER_BYTES + 4 * KIB;

/** Default of `SWITCHYARD_MAX_DECISION_BYTES`: 256 KiB. */
export const DEFAULT_MAX_DECISION_BYTES = 256 * KIB;
/** Default of `SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS`. */
export const DEFAULT_MAX_OPEN_HUMAN_REQUESTS = 100;
/** Default of `SWITCHYARD_MAX_STORED_REQUIREMENTS`. */
export const DEFAULT_MAX_STORED_REQUIREMENTS = 1_000;
/** Default of `SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES`: 8 MiB. */
export const DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES = 8 * MIB;
/** Largest accepted `SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES`: 12 MiB (keeps ≥ 4 MiB of a document for the engine's gates). */
export const MAX_HUMAN_REQUEST_RUN_BUDGET_BYTES = 12 * MIB;

/** The configurable per-run bounds (see the module comment). */
export interface RunBounds {
  /** Undecided human requests one run may have (`SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS`). */
  maxOpenHumanRequests: number;
  /** Requirements (gates and human requests, open or decided) past which a run takes no new human request (`SWITCHYARD_MAX_STORED_REQUIREMENTS`). */
  maxStoredRequirements: number;
  /** Bytes of JSON of a run document (answers of open human requests reserved) past which it takes no new human request (`SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES`). */
  humanRequestRunBudgetBytes: number;
  /** Largest `editedOutput`, `userInput` or `feedback` of a decision on a gate, bytes of JSON (`SWITCHYARD_MAX_DECISION_BYTES`). */
  maxDecisionBytes: number;
}

/** The defaults of every {@link RunBounds} field. */
export const DEFAULT_RUN_BOUNDS: Readonly<RunBounds> = Object.freeze({
  maxOpenHumanRequests: DEFAULT_MAX_OPEN_HUMAN_REQUESTS,
  maxStoredRequirements: DEFAULT_MAX_STORED_REQUIREMENTS,
  humanRequestRunBudgetBytes: DEFAULT_HUMAN_REQUEST_RUN_BUDGET_BYTES,
  maxDecisionBytes: DEFAULT_MAX_DECISION_BYTES,
});

/** What {@link checkHumanRequestFields} measures of a human request's body. */
export interface HumanRequestText {
  prompt: string;
  context?: string | null;
  choices?: readonly string[] | null;
}

/** Throws a {@link ValueTooLargeError} (400) naming `prompt`, `context` or `choices` when one is over its byte limit. */
export function checkHumanRequestFields(body: HumanRequestText): void {
  checkBytes('prompt', body.prompt, MAX_HUMAN_REQUEST_PROMPT_BYTES);
  checkBytes('context', body.context ?? null, MAX_HUMAN_REQUEST_CONTEXT_BYTES);
  checkBytes('choices', body.choices ?? null, MAX_HUMAN_REQUEST_CHOICES_BYTES);
}

/**
 * Bytes of JSON of a human request as stored (its requirement); throws a {@link ValueTooLargeError}
 * (400, field `humanRequest`) above {@link MAX_HUMAN_REQUEST_BYTES}.
 */
export function checkHumanRequestSize(requirement: RequirementRecord): number {
  const bytes = jsonByteLength(requirement);
  if (bytes > MAX_HUMAN_REQUEST_BYTES) {
    throw new ValueTooLargeError(
      'humanRequest',
      bytes,
      MAX_HUMAN_REQUEST_BYTES,
      ' as stored (prompt and context count twice: alone and as the inbox message; shorten prompt, context or choices)',
    );
  }
  return bytes;
}

/** The payload fields of a decision that carry caller data. */
export interface DecisionPayload {
  editedOutput?: unknown;
  userInput?: unknown;
  feedback?: string | null;
}

/**
 * Throws a {@link ValueTooLargeError} (400) naming `editedOutput`, `userInput` or `feedback` when
 * one is over its limit: {@link MAX_HUMAN_REQUEST_ANSWER_BYTES} (or `maxDecisionBytes` when lower)
 * for an answer to a human request (phase `ask`), `maxDecisionBytes` for a gate's decision.
 */
export function checkDecisionSize(requirement: Pick<RequirementRecord, 'phase'>, body: DecisionPayload, maxDecisionBytes: number): void {
  const limit = requirement.phase === 'ask' ? Math.min(MAX_HUMAN_REQUEST_ANSWER_BYTES, maxDecisionBytes) : maxDecisionBytes;
  checkBytes('editedOutput', body.editedOutput ?? null, limit);
  checkBytes('userInput', body.userInput ?? null, limit);
  checkBytes('feedback', body.feedback ?? null, limit);
}

/** What {@link humanRequestRefusal} reads of a run: its requirements and, for the budget, the whole document. */
export interface RunForBounds {
  pendingRequirements: readonly Pick<RequirementRecord, 'phase' | 'decidedAt'>[];
}

/**
 * Null when `run` may take a new human request of `requestBytes` under `bounds`; otherwise the
 * {@link LimitReachedError} (409 `limit_reached`) to throw, whose `details.limit` is
 * `openHumanRequests`, `storedRequirements` or `humanRequestRunBudgetBytes`. `run` is measured
 * whole (every field counts towards the budget).
 */
export function humanRequestRefusal(run: RunForBounds, requestBytes: number, bounds: RunBounds): LimitReachedError | null {
  const stored = run.pendingRequirements.length;
  const open = run.pendingRequirements.filter((requirement) => requirement.phase === 'ask' && requirement.decidedAt === null).length;
  if (open >= bounds.maxOpenHumanRequests) {
    return new LimitReachedError(
      `The run has ${open} unanswered human requests, the most it may have (SWITCHYARD_MAX_OPEN_HUMAN_REQUESTS=${bounds.maxOpenHumanRequests}); ` +
        'answer, reject or let some expire first',
      { limit: 'openHumanRequests', max: bounds.maxOpenHumanRequests, current: open },
    );
  }
  if (stored >= bounds.maxStoredRequirements) {
    return new LimitReachedError(
      `The run stores ${stored} requirements (gates and human requests), the most past which it takes no new human request ` +
        `(SWITCHYARD_MAX_STORED_REQUIREMENTS=${bounds.maxStoredRequirements})`,
      { limit: 'storedRequirements', max: bounds.maxStoredRequirements, current: stored },
    );
  }
  const needed = jsonByteLength(run) + requestBytes + (open + 1) * HUMAN_REQUEST_ANSWER_RESERVE_BYTES;
  if (needed > bounds.humanRequestRunBudgetBytes) {
    return new LimitReachedError(
      `The run document would take ${needed} bytes with this human request and room for the answers of its ${open + 1} open ones, ` +
        `over the budget of ${bounds.humanRequestRunBudgetBytes} bytes (SWITCHYARD_HUMAN_REQUEST_RUN_BUDGET_BYTES); answer some or ask shorter questions`,
      { limit: 'humanRequestRunBudgetBytes', max: bounds.humanRequestRunBudgetBytes, current: needed },
    );
  }
  return null;
}

/** Throws a ValueTooLargeError when `value` (null: absent) is over `limit` bytes of JSON. */
function checkBytes(field: string, value: unknown, limit: number): void {
  if (value === null) return;
  const bytes = jsonByteLength(value);
  if (bytes > limit) throw new ValueTooLargeError(field, bytes, limit);
}
