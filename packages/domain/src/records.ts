/**
 * Stored records as the rest of the code sees them: camelCase, ids as 24-hex strings, times as
 * Dates. The store's repositories convert them to and from snake_case MongoDB documents (through
 * `mapping.ts`); the API turns them into responses with `views.ts`.
 */
import type { Actor, ActorVia, WorkflowAccess } from './access.ts';
import type { PendingDirective } from './run-control.ts';
import type { NodeRunStatus, RunStatus } from './run-status.ts';
import type { DefinitionSnapshot, PendingUserInputField, ResolvedDependency } from './schemas/run.ts';
import type { NodeType, WorkflowCanvas, WorkflowNode, WorkflowTriggerDetail } from './schemas/workflow.ts';

/**
 * `workflow_definitions` document. `version` starts at 1 and grows with each definition change
 * (not with `enabled` or `tags`, which are metadata).
 */
export interface WorkflowRecord {
  id: string;
  name: string;
  description: string | null;
  canvas: WorkflowCanvas;
  nodes: WorkflowNode[];
  enabled: boolean;
  /** Distinct tags in the order given; [] for a definition stored before tags existed. */
  tags: string[];
  /** Declared inputs (input-schema.ts): the JSON Schema the run input must match; null (or absent, stored before it existed) when any input goes. Stored as `input_schema`, keys as written. */
  inputSchema?: Record<string, unknown> | null;
  /** Event triggers (issue #21, domain triggers.ts); [] (or absent, stored before they existed) when none. Stored as `triggers` with `filter_cel`, `input_cel`. */
  triggers?: WorkflowTriggerDetail[];
  /**
   * Who may do what with the workflow (issue #18, domain access.ts); stored with the union of its
   * principals as `access_principals` (indexed) for list queries. Workflows stored before #18 get
   * `SWITCHYARD_DEFAULT_ACCESS` at start-up.
   */
  access: WorkflowAccess;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** How a requirement was decided (the API's five resolutions plus the timeout outcomes). */
export type Resolution = 'confirm' | 'reject' | 'edit' | 'user_input' | 'route_select' | 'skip' | 'cancel';

/**
 * Where in a node's execution a gate sits; `ask` is no gate but a question an agent executing the
 * node asks a person (a human request, hitl.ts `buildAskRequirement`): the interpreter never waits
 * for it.
 */
export type GatePhase = 'pre' | 'post' | 'decision' | 'iteration' | 'ask';

/**
 * A HITL gate stored on the run (`pending_requirements[]`), spec "StepRequirementSummary" plus
 * bookkeeping: `gateKey` identifies the gate for re-traversal (node, iteration path, phase,
 * round), `decidedAt`/`decidedBy`/`resolution` record the decision. Decided requirements stay on
 * the run as history; the API shows the undecided ones.
 */
export interface RequirementRecord {
  schemaVersion: 1;
  /** API address of the gate: the node id, or `<node id>@<iteration path>` inside loops. */
  stepId: string;
  gateKey: string;
  nodeId: string;
  iterationPath: string;
  phase: GatePhase;
  /** 0 for the first ask; +1 for each onReject retry (or loop iteration for iteration review). */
  round: number;
  stepName: string;
  stepType: NodeType;
  requiresConfirmation: boolean;
  requiresUserInput: boolean;
  requiresOutputReview: boolean;
  requiresRouteSelection: boolean;
  confirmationMessage: string | null;
  userInputMessage: string | null;
  userInputSchema: PendingUserInputField[] | null;
  outputReviewMessage: string | null;
  availableChoices: string[] | null;
  allowMultipleSelections: boolean;
  stepOutput: unknown;
  isPostExecution: boolean;
  confirmed: boolean | null;
  rejectionFeedback: string | null;
  editedOutput: unknown;
  userInput: Record<string, unknown> | null;
  selectedChoices: string[] | null;
  resolution: Resolution | null;
  /** Who decided: a person, the timeout sweeper, or nobody because the run ended first. */
  decidedBy: 'human' | 'timeout' | 'run_ended' | null;
  /**
   * The person who decided (`decidedBy: 'human'`): the authenticated caller of /approve (issue
   * #18). Versions before #18 stored a name (a string): read it with `actorOfStored`. Absent on
   * older records.
   */
  decidedByUser?: Actor | null;
  /** Who alone may decide it (`humanReview.approvers`, a human request's `approvers`); absent/null: the workflow's operators. */
  approvers?: string[] | null;
  /** False (four-eyes): the run's trigger may not decide it (`humanReview.allowSelfApproval`); absent: true. */
  allowSelfApproval?: boolean;
  /** Human requests (phase `ask`) only: the question and its optional context, as the agent asked them. */
  prompt?: string;
  context?: string | null;
  retryCount: number;
  maxRetries: number | null;
  onTimeout: 'approve' | 'skip' | 'cancel';
  onReject: 'skip' | 'cancel' | 'retry' | 'else_branch';
  requestedAt: Date;
  /** From humanReview (or a human request); a gate's clock starts when the run parks with this gate visible. */
  timeoutSeconds: number | null;
  /** When the timeout fires; null until the gate has been visible (the run parked on it). Set at once for a human request. */
  timeoutAt: Date | null;
  decidedAt: Date | null;
}

/** A step of a run waiting in retry backoff: which node run, and when its next attempt starts. */
export interface RetryWait {
  nodeId: string;
  iterationPath: string;
  wakeAt: Date;
}

/** `workflow_runs` document. Lease fields say which runner instance owns the run right now. */
export interface RunRecord {
  id: string;
  workflowDefinitionId: string;
  workflowVersion: number;
  status: RunStatus;
  triggerSource: string;
  initialInput: Record<string, unknown>;
  finalOutput: unknown;
  errorSummary: string | null;
  definitionSnapshot: DefinitionSnapshot;
  parentRunId: string | null;
  resolvedDependencies: ResolvedDependency[];
  pendingRequirements: RequirementRecord[];
  /**
   * A directive its runner has yet to honour (run-control.ts): `pause` (at the next node
   * boundary), `cancel`, `timeout`; null when none. Set only while the run is `running`.
   */
  pendingDirective: PendingDirective | null;
  /** When the run last became `paused` (null/absent when it is not paused). */
  pausedAt?: Date | null;
  /** Why the run was cancelled (the cancel body's `reason`, or the timeout), when a cancel was requested. */
  cancelReason?: string | null;
  /** Who requested the cancel (issue #18), or {@link TIMEOUT_ACTOR}; a name (string) on runs stored before #18: read it with `actorOfStored`. */
  cancelledBy?: Actor | null;
  /**
   * A node rerun's target (`node_rerun` runs): the run ends right after this node executed at
   * this iteration path, with its output as the final output (retry-plan.ts `planNodeRerun`).
   */
  stopAfter?: { nodeId: string; iterationPath: string } | null;
  /** Steps waiting in retry backoff right now, with when they wake (runState `waiting-timer`). */
  retryWaits?: RetryWait[];
  /** The trigger's `timeoutSeconds`: the run must end within this many seconds of its trigger. */
  timeoutSeconds?: number | null;
  /** `startedAt + timeoutSeconds`: the sweeper stops a run still not ended by then. */
  deadlineAt?: Date | null;
  /** Owner id (`host:pid:random`) of the runner holding the lease, or null. */
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  heartbeatAt: Date | null;
  /** Bumped by every HITL decision; parking fails when it moved during a traversal. */
  wakeSeq: number;
  /** True when a decision arrived that no traversal has consumed yet (a continuation is due). */
  wakePending: boolean;
  /** Consecutive executions that ended on an internal (infrastructure) error; reset by progress. */
  internalFailures: number;
  /**
   * Claims since the run last made progress (a node run ended) or parked: each claim adds one,
   * progress and parking reset it. A run claimed again and again without progress (its
   * executions keep losing their lease or crashing the process) is failed as a poison run.
   * Missing on runs stored by older versions (read as 0).
   */
  claimsSinceProgress?: number;
  /** Recovery scans leave the run alone until then (backoff after claims without progress); null when due. */
  recoverAfter?: Date | null;
  /** Most children of one parallel node in flight at once for this run (trigger option); absent: the service default. */
  parallelLimit?: number | null;
  triggeringUserId: string | null;
  triggeringUsername: string | null;
  triggeringScopes: string[];
  /** How the trigger was identified (the `via` of `triggeredBy`); absent on runs stored before #18. */
  triggeringVia?: ActorVia | null;
  /**
   * The user ids of everyone who triggered this run or a run it was made from with the same input
   * (retry, node rerun, replay: the source's lineage plus its own trigger), for four-eyes
   * (`allowSelfApproval: false`): none of them may decide its gates. Absent on runs stored before
   * #18 (read as `[triggeringUserId]`).
   */
  triggerLineage?: string[];
  /**
   * The W3C `traceparent` every execution of the run continues (tracing, docs/operations/tracing.md):
   * the trigger request's, else the first traced execution's; absent/null when tracing never saw the run.
   */
  traceParent?: string | null;
  /** The W3C `tracestate` that came with {@link traceParent} (at most 512 characters), if any. */
  traceState?: string | null;
  /** The schedule whose tick started the run (`triggerSource: "schedule"`, issue #21); null/absent otherwise. */
  scheduleId?: string | null;
  /** The tick of {@link scheduleId} the run is for (before jitter); null/absent otherwise. */
  scheduledAt?: Date | null;
  /** The event that started the run (`triggerSource: "event"`, issue #21); null/absent otherwise. */
  eventId?: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Bytes of a node run's snapshots as JSON text (see {@link NodeRunRecord.snapshotBytes}). */
export interface SnapshotBytes {
  input: number;
  output: number;
  originalOutput: number;
}

/** One agent of a step's `a2aPool` that failed an attempt (`NodeRunRecord.poolAttempts`). */
export interface PoolAttempt {
  /** The pool member's registry key. */
  executorKey: string;
  /** Why it failed (the executor's message, bounded like node-run errors). */
  error: string;
}

/** `node_runs` document: one node at one iteration path of one run. */
export interface NodeRunRecord {
  id: string;
  workflowRunId: string;
  workflowDefinitionId: string;
  nodeId: string;
  nodeName: string;
  nodeType: NodeType;
  /** Loop iterations enclosing the node, outermost first, joined by '/'; '' outside loops. */
  iterationPath: string;
  status: NodeRunStatus;
  attempt: number;
  inputSnapshot: unknown;
  outputSnapshot: unknown;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The executor's output when a human edited it during output review (`outputSnapshot` holds the edit). */
  originalOutputSnapshot?: unknown;
  /** Set when this node run was copied from another run's node run (retry with reuse). */
  reusedFromNodeRunId?: string | null;
  /**
   * Bytes of each snapshot's JSON text, recorded when it is written, so reads can leave large
   * snapshots out without loading them (`response-bounds.ts`). Absent on node runs stored by
   * older versions, and on records read without snapshots' sizes.
   */
  snapshotBytes?: SnapshotBytes;
  /**
   * Step node runs: the registry key that served the latest finished attempt (MongoDB
   * `executor_key`): the step's `executorKey`, or the `a2aPool` member that succeeded; null while
   * an attempt runs, when every pool member failed, and for other node types. Absent on node runs
   * stored by older versions.
   */
  executorKey?: string | null;
  /**
   * `a2aPool` steps: the members that failed the latest finished attempt before one served it (or
   * all of them, when none did), in the order tried (MongoDB `pool_attempts`); null otherwise.
   */
  poolAttempts?: PoolAttempt[] | null;
  createdAt: Date;
  updatedAt: Date;
}

/** `run_events` document: an append-only log per run, `seq` 1, 2, 3, ... */
export interface RunEventRecord {
  id: string;
  runId: string;
  seq: number;
  /** One of `RUN_EVENT_TYPES` (`run-events.ts`); events of older versions may hold others. */
  type: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}
