/**
 * The approvals inbox's view of the API: a row of GET /api/v1/approvals, its requirement
 * (StepRequirementSummary), and the decision body of POST …/runs/{run_id}/approve.
 */

/** One form field of a gate's `userInputSchema`, as the API sends it (agno's type names, `value` = default). */
export interface InputField {
  name: string;
  /** `str`, `int`, `float`, `bool`, `list`, `dict` (older clients: string, number, boolean, array). */
  fieldType?: string;
  description?: string | null;
  required: boolean;
  /** The default value (`defaultValue` in the authoring schema). */
  value?: unknown;
  defaultValue?: unknown;
  allowedValues?: unknown[] | null;
}

/** What a gate asks (StepRequirementSummary). */
export interface Requirement {
  stepId: string;
  stepName?: string;
  stepType?: string;
  requiresConfirmation: boolean;
  requiresUserInput: boolean;
  requiresOutputReview: boolean;
  requiresRouteSelection: boolean;
  confirmationMessage?: string | null;
  userInputMessage?: string | null;
  userInputSchema?: InputField[] | null;
  outputReviewMessage?: string | null;
  availableChoices?: string[] | null;
  allowMultipleSelections: boolean;
  stepOutput?: unknown;
  omittedFields?: Record<string, number>;
  isPostExecution?: boolean;
  timeoutAt?: string | null;
  onTimeout?: string;
  onReject?: string;
  approvers?: string[] | null;
  /** false (four-eyes): whoever triggered the run may not decide it. */
  allowSelfApproval?: boolean;
}

/** A row of the approvals inbox. */
export interface ApprovalRow {
  runId: string;
  workflowId: string;
  workflowName: string | null;
  runStatus: string;
  nodeId: string;
  iterationPath: string;
  phase: string;
  requestedAt: string;
  requirement: Requirement;
  approvers: string[] | null;
  canDecide: boolean;
}

/** A page of the approvals inbox. */
export interface ApprovalsPage {
  approvals: ApprovalRow[];
  pagination: { total: number; page: number; perPage: number; totalPages: number };
}

/** The body of POST …/approve. */
export interface DecisionBody {
  stepId: string;
  resolution: 'confirm' | 'reject' | 'edit' | 'user_input' | 'route_select';
  feedback?: string | null;
  editedOutput?: unknown;
  userInput?: Record<string, unknown>;
  selectedChoices?: string[];
}

/** A gate as the run detail's `requirements` lists it, with its decision. */
export interface DecidedRequirement extends Requirement {
  resolution: string | null;
  decidedBy: string | null;
  decidedByUser: { userId: string; username?: string | null; via?: string } | null;
  decidedAt: string | null;
  confirmed?: boolean | null;
  rejectionFeedback?: string | null;
  editedOutput?: unknown;
  userInput?: Record<string, unknown> | null;
  selectedChoices?: string[] | null;
}

/** The phase of a row as a person reads it. */
export function phaseLabel(phase: string): string {
  switch (phase) {
    case 'pre':
      return 'before the step';
    case 'post':
      return 'output review';
    case 'decision':
      return 'route choice';
    case 'iteration':
      return 'iteration review';
    case 'ask':
      return 'question from an agent';
    default:
      return phase;
  }
}

/** Who a gate names as its deciders, as text ("user:alice, group:ops"); null when it names none. */
export function approversText(row: Pick<ApprovalRow, 'approvers' | 'requirement'>): string | null {
  const approvers = row.approvers ?? row.requirement.approvers ?? null;
  return approvers && approvers.length > 0 ? approvers.join(', ') : null;
}
