/**
 * HITL v2 rules that need no I/O (spec "Resolve HITL Requirement", "StepRequirementSummary",
 * "PendingUserInputField"; DESIGN.md "HITL v2"): the requirement a gate raises, the API address of
 * a gate, and the validation of a decision against the requirement it decides. Also the human
 * requests an agent executing a step raises (phase `ask`, issue #8): stored and decided like gates,
 * but the interpreter never waits for them.
 */
import { actorOfStored, type Actor } from './access.ts';
import { InvalidRequestError } from './errors.ts';
import { MAX_USER_JSON_DEPTH, jsonDepth } from './mapping.ts';
import type { GatePhase, RequirementRecord, Resolution } from './records.ts';
import type { ApproveBody } from './schemas/approval.ts';
import type { PendingUserInputField } from './schemas/run.ts';
import type { HumanReview, UserInputField, WorkflowNode } from './schemas/workflow.ts';

/** The decision fields written onto a requirement. */
export interface Decision {
  resolution: Resolution;
  confirmed: boolean;
  rejectionFeedback: string | null;
  editedOutput: unknown;
  userInput: Record<string, unknown> | null;
  selectedChoices: string[] | null;
  decidedBy: 'human' | 'timeout';
  /** The person who decided (a human decision), see RequirementRecord.decidedByUser. */
  decidedByUser?: Actor | null;
}

/**
 * API address of one gate: unique among all the gates a run ever raises, so that a decision
 * meant for one gate can never land on a later one (a late request of a burst gets 409 instead
 * of approving the next iteration or retry round unseen). The first gate of a node is addressed
 * by the node id alone, as in the spec; the rest add what tells them apart:
 * `@<iteration path>` inside loops (iteration-path.ts), `:review` for an output review,
 * `:iteration-<i>` for a loop's iteration review, `:retry-<n>` for a round after an onReject retry.
 */
export function stepIdOf(nodeId: string, iterationPath: string, phase: GatePhase = 'pre', round = 0, iteration?: number): string {
  const where = iterationPath === '' ? '' : `@${iterationPath}`;
  const what = phase === 'post' ? ':review' : phase === 'iteration' ? `:iteration-${iteration}` : '';
  return `${nodeId}${where}${what}${round > 0 ? `:retry-${round}` : ''}`;
}

/**
 * Re-traversal key of a gate: node, iteration path, phase (with the loop iteration for iteration
 * reviews) and round.
 */
export function gateKeyOf(nodeId: string, iterationPath: string, phase: GatePhase, round: number, iteration?: number): string {
  return `${nodeId}@${iterationPath}#${phase}${iteration === undefined ? '' : `:${iteration}`}#${round}`;
}

/**
 * API address of a human request (phase `ask`): the node's first-gate address plus
 * `:ask-<token>`, e.g. `review@2:ask-9f86d081884c`. `token` (random) makes it unique per request.
 */
export function askStepIdOf(nodeId: string, iterationPath: string, token: string): string {
  return `${stepIdOf(nodeId, iterationPath)}:ask-${token}`;
}

/** Key of a human request (phase `ask`): no traversal ever looks it up, so it only has to be unique. */
export function askGateKeyOf(nodeId: string, iterationPath: string, token: string): string {
  return `${nodeId}@${iterationPath}#ask:${token}#0`;
}

/** What a gate asks, beyond its node's HumanReview. */
export interface GateRequest {
  node: WorkflowNode;
  iterationPath: string;
  phase: GatePhase;
  round: number;
  /** The loop iteration under review (phase `iteration`). */
  iteration?: number;
  requiresConfirmation: boolean;
  requiresUserInput: boolean;
  requiresOutputReview: boolean;
  requiresRouteSelection: boolean;
  /** Output under review (post-execution and iteration review), or a router's suggestion. */
  stepOutput?: unknown;
  /** Now, and the clock's idea of it, for `requestedAt` and `timeoutAt`. */
  now: Date;
}

const PYTHON_TYPES: Record<UserInputField['fieldType'], string> = { string: 'str', number: 'float', boolean: 'bool', array: 'list' };

/** Authoring form fields -> the runtime PendingUserInputField payload (agno's type names, `value` = default). */
export function toPendingUserInputFields(fields: readonly UserInputField[]): PendingUserInputField[] {
  return fields.map((field) => ({
    name: field.name,
    fieldType: PYTHON_TYPES[field.fieldType],
    description: field.description ?? null,
    required: field.required,
    value: field.defaultValue ?? null,
    allowedValues: field.allowedValues ?? null,
  }));
}

/** The decision fields of a requirement nobody has decided yet (a gate's or a human request's). */
export const UNDECIDED = {
  confirmed: null,
  rejectionFeedback: null,
  editedOutput: null,
  userInput: null,
  selectedChoices: null,
  resolution: null,
  decidedBy: null,
} as const satisfies Partial<RequirementRecord>;

/** Builds the requirement a gate raises (undecided). */
export function buildRequirement(request: GateRequest): RequirementRecord {
  const { node } = request;
  const review = node.humanReview as HumanReview;
  const collectsInput = request.requiresUserInput && !request.requiresRouteSelection;
  return {
    schemaVersion: 1,
    stepId: stepIdOf(node.id, request.iterationPath, request.phase, request.round, request.iteration),
    gateKey: gateKeyOf(node.id, request.iterationPath, request.phase, request.round, request.iteration),
    nodeId: node.id,
    iterationPath: request.iterationPath,
    phase: request.phase,
    round: request.round,
    stepName: node.name,
    stepType: node.nodeType,
    requiresConfirmation: request.requiresConfirmation,
    requiresUserInput: collectsInput,
    requiresOutputReview: request.requiresOutputReview,
    requiresRouteSelection: request.requiresRouteSelection,
    confirmationMessage: request.requiresConfirmation ? review.confirmationMessage : null,
    userInputMessage: request.requiresUserInput ? review.userInputMessage : null,
    userInputSchema: collectsInput ? toPendingUserInputFields(review.userInputSchema) : null,
    outputReviewMessage: request.phase === 'iteration' ? review.iterationReviewMessage : request.requiresOutputReview ? review.outputReviewMessage : null,
    availableChoices: request.requiresRouteSelection ? node.choices.map((c) => c.name) : null,
    allowMultipleSelections: request.requiresRouteSelection && review.allowMultipleSelections,
    stepOutput: request.stepOutput ?? null,
    isPostExecution: request.phase === 'post' || request.phase === 'iteration',
    ...UNDECIDED,
    retryCount: request.round,
    maxRetries: review.maxRetries,
    onTimeout: review.onTimeout,
    onReject: review.onReject,
    requestedAt: request.now,
    timeoutSeconds: review.timeoutSeconds,
    timeoutAt: null,
    decidedAt: null,
    ...(review.approvers ? { approvers: [...review.approvers] } : {}),
    ...(review.allowSelfApproval === false ? { allowSelfApproval: false } : {}),
  };
}

/** The form field of a free-text human request: the person's answer. */
export const ASK_RESPONSE_FIELD = 'response';

/** What an agent executing a step asks a person (POST .../human-requests). */
export interface AskRequest {
  node: Pick<WorkflowNode, 'id' | 'name' | 'nodeType'>;
  iterationPath: string;
  /** Unique token of this request (random), see {@link askStepIdOf}. */
  token: string;
  prompt: string;
  context: string | null;
  /** The answers to pick from (one of them); null for a free-text answer. */
  choices: string[] | null;
  /** The request expires this many seconds after `now` when nobody answered; null: never. */
  timeoutSeconds: number | null;
  /** Who alone may answer (principals, issue #18); null/absent: the workflow's operators. */
  approvers?: string[] | null;
  now: Date;
}

/**
 * Builds the (undecided) requirement of a human request. It reads like a gate to the approvals
 * inbox and /approve: with `choices` a route selection of one choice (`availableChoices`), else a
 * form of one optional free-text field `response`; the message is the prompt followed by the
 * context. Its timeout clock starts at once (`timeoutAt`), and expiry closes it with `cancel`
 * (onTimeout); a rejection (onReject `skip`) only answers the agent. Neither touches the run.
 */
export function buildAskRequirement(request: AskRequest): RequirementRecord {
  const { node, iterationPath, token, choices, now } = request;
  return {
    schemaVersion: 1,
    stepId: askStepIdOf(node.id, iterationPath, token),
    gateKey: askGateKeyOf(node.id, iterationPath, token),
    nodeId: node.id,
    iterationPath,
    phase: 'ask',
    round: 0,
    stepName: node.name,
    stepType: node.nodeType,
    requiresConfirmation: false,
    requiresUserInput: choices === null,
    requiresOutputReview: false,
    requiresRouteSelection: choices !== null,
    confirmationMessage: null,
    userInputMessage: request.context ? `${request.prompt}\n\n${request.context}` : request.prompt,
    userInputSchema:
      choices === null
        ? [{ name: ASK_RESPONSE_FIELD, fieldType: 'str', description: 'Your answer', required: false, value: null, allowedValues: null }]
        : null,
    outputReviewMessage: null,
    availableChoices: choices === null ? null : [...choices],
    allowMultipleSelections: false,
    stepOutput: null,
    isPostExecution: false,
    ...UNDECIDED,
    retryCount: 0,
    maxRetries: null,
    onTimeout: 'cancel',
    onReject: 'skip',
    requestedAt: now,
    timeoutSeconds: request.timeoutSeconds,
    timeoutAt: request.timeoutSeconds === null ? null : new Date(now.getTime() + request.timeoutSeconds * 1000),
    decidedAt: null,
    prompt: request.prompt,
    context: request.context,
    ...(request.approvers ? { approvers: [...new Set(request.approvers)] } : {}),
  };
}

/** Where a human request stands, as the agent that asked it learns it. */
export interface AskOutcome {
  status: 'pending' | 'answered' | 'cancelled' | 'expired';
  /** `approved` for an answer, `blocked` for a rejection, an expiry or a cancellation; null while pending. */
  decision: 'approved' | 'blocked' | null;
  /** The answer: the free text, the picked choice, or a rejection's feedback; else null. */
  response: string | null;
  /** Who answered (see RequirementRecord.decidedByUser); null unless a person did. */
  answeredBy: Actor | null;
}

/**
 * The outcome of a human request: pending while undecided; a person's decision answers it
 * (confirm, user_input, route_select approve; reject blocks, with its feedback as the response);
 * a timeout expires it; the run's end (`run_ended`) cancels it.
 */
export function askOutcomeOf(requirement: RequirementRecord): AskOutcome {
  if (requirement.decidedAt === null) return { status: 'pending', decision: null, response: null, answeredBy: null };
  if (requirement.decidedBy === 'timeout') return { status: 'expired', decision: 'blocked', response: null, answeredBy: null };
  if (requirement.decidedBy !== 'human') return { status: 'cancelled', decision: 'blocked', response: null, answeredBy: null };
  const answeredBy = actorOfStored(requirement.decidedByUser);
  if (requirement.resolution === 'reject') return { status: 'answered', decision: 'blocked', response: requirement.rejectionFeedback, answeredBy };
  const text = requirement.userInput?.[ASK_RESPONSE_FIELD];
  const response = requirement.selectedChoices?.[0] ?? (typeof text === 'string' ? text : null);
  return { status: 'answered', decision: 'approved', response, answeredBy };
}

/**
 * Checks a human decision against the requirement (spec "Resolution x Requirement Type
 * Compatibility") and returns the fields to store. Throws InvalidRequestError (400) on a
 * mismatch, a missing payload, form values that break the schema, or unknown route choices.
 */
export function validateDecision(requirement: RequirementRecord, body: ApproveBody): Decision {
  for (const field of ['editedOutput', 'userInput'] as const) {
    if (jsonDepth(body[field]) > MAX_USER_JSON_DEPTH) throw new InvalidRequestError(`${field} nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
  }
  const decision: Decision = {
    resolution: body.resolution,
    confirmed: body.resolution !== 'reject',
    rejectionFeedback: body.resolution === 'reject' ? (body.feedback ?? null) : null,
    editedOutput: null,
    userInput: null,
    selectedChoices: null,
    decidedBy: 'human',
  };
  const step = `step '${requirement.stepId}'`;
  switch (body.resolution) {
    case 'confirm':
      if (requirement.requiresUserInput) decision.userInput = checkUserInput(requirement, {}, step);
      if (requirement.requiresRouteSelection && suggestedChoice(requirement) === null) {
        if (requirement.phase === 'ask') throw new InvalidRequestError(`Resolution 'confirm' cannot answer ${step}: pick one of its choices with route_select`);
        throw new InvalidRequestError(`Resolution 'confirm' needs a suggested route, and ${step} has none (its router has no conditionCel); use route_select`);
      }
      return decision;
    case 'reject':
      return decision;
    case 'edit':
      if (!requirement.requiresOutputReview || !requirement.isPostExecution) {
        throw new InvalidRequestError(`Resolution 'edit' needs an output review after execution; ${step} is not one`);
      }
      if (body.editedOutput === undefined || body.editedOutput === null) throw new InvalidRequestError("Resolution 'edit' requires editedOutput");
      decision.editedOutput = body.editedOutput;
      return decision;
    case 'user_input':
      if (!requirement.requiresUserInput) throw new InvalidRequestError(`Resolution 'user_input' needs a requirement that collects user input; ${step} does not`);
      if (!body.userInput) throw new InvalidRequestError("Resolution 'user_input' requires userInput");
      decision.userInput = checkUserInput(requirement, body.userInput as Record<string, unknown>, step);
      return decision;
    case 'route_select':
      if (!requirement.requiresRouteSelection) throw new InvalidRequestError(`Resolution 'route_select' needs a route selection; ${step} is not one`);
      if (!body.selectedChoices || body.selectedChoices.length === 0) throw new InvalidRequestError("Resolution 'route_select' requires selectedChoices");
      decision.selectedChoices = checkChoices(requirement, body.selectedChoices);
      return decision;
  }
}

/** The decision a timeout makes: onTimeout approve -> confirm (defaults), skip, cancel. */
export function timeoutDecision(requirement: RequirementRecord): Decision {
  const resolution: Resolution = requirement.onTimeout === 'approve' ? 'confirm' : requirement.onTimeout;
  return {
    resolution,
    confirmed: resolution === 'confirm',
    rejectionFeedback: null,
    editedOutput: null,
    userInput: resolution === 'confirm' && requirement.requiresUserInput ? defaultsOf(requirement) : null,
    selectedChoices: null,
    decidedBy: 'timeout',
  };
}

/** The route a router's selector suggested for a route selection, or null. */
function suggestedChoice(requirement: RequirementRecord): string | null {
  const output = requirement.stepOutput as { suggestedChoice?: unknown } | null;
  return typeof output?.suggestedChoice === 'string' ? output.suggestedChoice : null;
}

function defaultsOf(requirement: RequirementRecord): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const field of requirement.userInputSchema ?? []) {
    if (field.value !== null && field.value !== undefined) Object.defineProperty(values, field.name, { value: field.value, enumerable: true, writable: true, configurable: true });
  }
  return values;
}

const TYPE_CHECKS: Record<string, (value: unknown) => boolean> = {
  str: (v) => typeof v === 'string',
  float: (v) => typeof v === 'number' && Number.isFinite(v),
  int: (v) => typeof v === 'number' && Number.isInteger(v),
  bool: (v) => typeof v === 'boolean',
  list: (v) => Array.isArray(v),
  dict: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/** Validates form values (defaults filled in) against the requirement's fields. */
function checkUserInput(requirement: RequirementRecord, given: Record<string, unknown>, step: string): Record<string, unknown> {
  const fields = requirement.userInputSchema ?? [];
  const values = { ...defaultsOf(requirement), ...given };
  const problems: string[] = [];
  const known = new Set(fields.map((f) => f.name));
  for (const name of Object.keys(given)) if (!known.has(name)) problems.push(`unknown field '${name}'`);
  for (const field of fields) {
    const value = Object.hasOwn(values, field.name) ? values[field.name] : undefined;
    if (value === undefined || value === null) {
      if (field.required) problems.push(`field '${field.name}' is required`);
      continue;
    }
    const check = field.fieldType ? TYPE_CHECKS[field.fieldType] : undefined;
    if (check && !check(value)) problems.push(`field '${field.name}' must be of type ${field.fieldType}`);
    if (field.allowedValues && !field.allowedValues.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
      problems.push(`field '${field.name}' must be one of ${JSON.stringify(field.allowedValues)}`);
    }
  }
  if (problems.length > 0) throw new InvalidRequestError(`Invalid userInput for ${step}: ${problems.join('; ')}`, problems);
  return values;
}

function checkChoices(requirement: RequirementRecord, selected: readonly string[]): string[] {
  const available = requirement.availableChoices ?? [];
  const unknown = selected.filter((name) => !available.includes(name));
  if (unknown.length > 0) throw new InvalidRequestError(`Unknown choice(s) ${unknown.map((c) => `'${c}'`).join(', ')}; available: ${available.join(', ')}`);
  if (new Set(selected).size !== selected.length) throw new InvalidRequestError('selectedChoices lists a choice twice');
  if (selected.length > 1 && !requirement.allowMultipleSelections) throw new InvalidRequestError(`This router allows one choice, got ${selected.length}`);
  return [...selected];
}
