/**
 * Run and node-run schemas (spec endpoints 7-12, "NodeRunDetail", "NodeRunListResponse",
 * "StepRequirementSummary", "PendingUserInputField", "WorkflowRunStatus", "NodeRunStatus").
 */
import Type, { type Static } from 'typebox';
import { CLOSED, JsonObject, JsonValue, PageQuery, Pagination, Timestamp, nullable } from './common.ts';
import { WorkflowCanvas, WorkflowNode } from './workflow.ts';
import { NODE_RUN_STATUSES, RUN_STATUSES } from '../run-status.ts';
import { ActorSchema } from '../access.ts';
import { RUN_STATES } from '../run-state.ts';
import { PENDING_DIRECTIVES } from '../run-control.ts';
import { MAX_ACTIVE_NODE_IDS, NODE_RUN_PAGE_SIZE } from '../response-bounds.ts';


export const RunStatusSchema = Type.Enum([...RUN_STATUSES]);
export const NodeRunStatusSchema = Type.Enum([...NODE_RUN_STATUSES]);

/** ResolvedDependency: how a retry run treats one node of its parent run. */
export const ResolvedDependency = Type.Object(
  {
    nodeId: Type.String({ minLength: 1 }),
    resolution: Type.Union([Type.Literal('reuse_previous_output'), Type.Literal('rerun')]),
    sourceNodeRunId: Type.Optional(nullable(Type.String())),
  },
  CLOSED,
);
export type ResolvedDependency = Static<typeof ResolvedDependency>;

/** Longest `timeoutSeconds` a trigger may set: 30 days. */
export const MAX_RUN_TIMEOUT_SECONDS = 30 * 86_400;

/** Body of POST /workflows/{id}/runs. */
export const TriggerRunBody = Type.Object(
  {
    triggerSource: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: 'manual' })),
    initialInput: Type.Optional(nullable(JsonObject)),
    parentRunId: Type.Optional(nullable(Type.String())),
    resolvedDependencies: Type.Optional(nullable(Type.Array(ResolvedDependency))),
    dryRun: Type.Optional(Type.Boolean({ description: 'Check the trigger (workflow, definition, input, dependencies) and answer 200 without starting a run' })),
    parallelLimit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: "Most children of one parallel node in flight at once for this run (default: the service's SWITCHYARD_PARALLEL_LIMIT)" }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RUN_TIMEOUT_SECONDS,
        description:
          'The whole run must end within this many seconds of the trigger (paused and waiting time included); otherwise it is stopped like a cancel and ends failed with an errorSummary saying it timed out',
      }),
    ),
  },
  CLOSED,
);
export type TriggerRunBody = Static<typeof TriggerRunBody>;

/** The outcome of a check that saves nothing: a definition (`POST /workflows/validate`) or a trigger (`dryRun`). */
export const ValidationResult = Type.Object({
  valid: Type.Boolean(),
  problems: Type.Array(Type.String(), { description: 'Every problem found; empty when valid' }),
});
export type ValidationResult = Static<typeof ValidationResult>;

/** 200 response of a trigger with `dryRun: true`. */
export const DryRunResponse = Type.Object({
  ...ValidationResult.properties,
  dryRun: Type.Literal(true),
  workflowId: Type.String(),
  workflowVersion: Type.Integer(),
});
export type DryRunResponse = Static<typeof DryRunResponse>;

/** 202 response of POST /workflows/{id}/runs. */
export const TriggerRunResponse = Type.Object({
  runId: Type.String(),
  workflowDefinitionId: Type.String(),
  status: RunStatusSchema,
  triggerSource: Type.String(),
  startedAt: Timestamp,
  message: Type.String(),
});
export type TriggerRunResponse = Static<typeof TriggerRunResponse>;

/** PendingUserInputField: runtime form field of a pending requirement. */
export const PendingUserInputField = Type.Object({
  name: Type.String(),
  fieldType: Type.Optional(Type.String({ description: 'str | int | float | bool | list | dict' })),
  description: Type.Optional(nullable(Type.String())),
  required: Type.Boolean(),
  value: Type.Optional(JsonValue),
  allowedValues: Type.Optional(nullable(Type.Array(JsonValue))),
});
export type PendingUserInputField = Static<typeof PendingUserInputField>;

/** StepRequirementSummary: one HITL gate awaiting (or holding) a decision. */
export const StepRequirementSummary = Type.Object({
  schemaVersion: Type.Integer(),
  stepId: Type.String(),
  stepName: Type.Optional(Type.String()),
  stepIndex: Type.Optional(Type.Integer()),
  stepType: Type.Optional(Type.String()),
  requiresConfirmation: Type.Boolean(),
  requiresUserInput: Type.Boolean(),
  requiresOutputReview: Type.Boolean(),
  requiresRouteSelection: Type.Boolean(),
  confirmationMessage: Type.Optional(nullable(Type.String())),
  userInputMessage: Type.Optional(nullable(Type.String())),
  userInputSchema: Type.Optional(nullable(Type.Array(PendingUserInputField))),
  outputReviewMessage: Type.Optional(nullable(Type.String())),
  availableChoices: Type.Optional(nullable(Type.Array(Type.String()))),
  allowMultipleSelections: Type.Boolean(),
  stepOutput: Type.Optional(nullable(JsonValue)),
  omittedFields: Type.Optional(
    Type.Object(
      {
        stepOutput: Type.Optional(Type.Integer()),
        editedOutput: Type.Optional(Type.Integer()),
        userInput: Type.Optional(Type.Integer()),
      },
      { description: 'Values too large for this response (shown as null), with their size in bytes of JSON; the node run detail has them' },
    ),
  ),
  isPostExecution: Type.Boolean(),
  confirmed: Type.Optional(nullable(Type.Boolean())),
  rejectionFeedback: Type.Optional(nullable(Type.String())),
  editedOutput: Type.Optional(nullable(JsonValue)),
  userInput: Type.Optional(nullable(JsonObject)),
  selectedChoices: Type.Optional(nullable(Type.Array(Type.String()))),
  retryCount: Type.Integer(),
  maxRetries: Type.Optional(nullable(Type.Integer())),
  timeoutAt: Type.Optional(nullable(Timestamp)),
  onTimeout: Type.String(),
  onReject: Type.String(),
  approvers: Type.Optional(
    nullable(Type.Array(Type.String(), { description: 'Who alone may decide it (`humanReview.approvers`, a human request\'s `approvers`); null: the workflow\'s operators' })),
  ),
  allowSelfApproval: Type.Optional(Type.Boolean({ description: 'false (four-eyes): whoever triggered the run may not decide it' })),
});
export type StepRequirementSummary = Static<typeof StepRequirementSummary>;

/** A HITL gate on the record: the summary, where it was raised, and how it was decided (null fields while undecided). */
export const RequirementRecordView = Type.Object({
  ...StepRequirementSummary.properties,
  nodeId: Type.String(),
  iterationPath: Type.String(),
  round: Type.Integer({ description: '0 for the first ask; +1 for each onReject retry or loop iteration' }),
  requestedAt: Timestamp,
  resolution: nullable(Type.String({ description: 'confirm | reject | edit | user_input | route_select | cancel' })),
  decidedBy: nullable(Type.String({ description: 'human | timeout | run_ended' })),
  decidedByUser: nullable({ ...ActorSchema, description: 'The person who decided (decidedBy human): the authenticated caller of /approve; null otherwise' }),
  decidedAt: nullable(Timestamp),
});
export type RequirementRecordView = Static<typeof RequirementRecordView>;

/** NodeRunDetail: one node execution with its I/O snapshots. */
export const NodeRunDetail = Type.Object({
  id: Type.String(),
  nodeId: Type.String(),
  nodeName: Type.String(),
  nodeType: Type.String(),
  iterationPath: Type.String({
    description:
      "Loop iterations enclosing the node, outermost first, e.g. '2', '1/3', '3r1' (iteration re-run after a rejected review), '2/r1' (router branches re-run after a rejected output review); '' outside loops",
  }),
  workflowRunId: Type.String(),
  status: NodeRunStatusSchema,
  attempt: Type.Integer({ description: '1-based attempt counter (0 = not yet started)' }),
  inputSnapshot: nullable(JsonValue),
  outputSnapshot: nullable(JsonValue),
  originalOutputSnapshot: Type.Optional(nullable(JsonValue)),
  decisions: Type.Optional(
    Type.Array(RequirementRecordView, { description: 'The HITL gates of this node at this iteration path, decided or not, in the order raised' }),
  ),
  omittedSnapshots: Type.Optional(
    Type.Object(
      {
        inputSnapshot: Type.Optional(Type.Integer()),
        outputSnapshot: Type.Optional(Type.Integer()),
        originalOutputSnapshot: Type.Optional(Type.Integer()),
      },
      {
        description:
          'Snapshots left out of this list-like response (shown as null) because they are large, with their size in bytes of JSON; ' +
          'GET .../nodes/{node_run_id} returns them in full',
      },
    ),
  ),
  error: nullable(Type.String()),
  executorKey: Type.Optional(
    Type.String({
      description:
        "Steps: the registry key that served the latest finished attempt (the step's executorKey, or the a2aPool agent that succeeded); " +
        'absent while an attempt runs, when every agent of the pool failed, and for other node types',
    }),
  ),
  poolAttempts: Type.Optional(
    Type.Array(Type.Object({ executorKey: Type.String(), error: Type.String() }), {
      description: 'a2aPool steps: the agents that failed the latest finished attempt before one served it (all of them when none did), in the order tried',
    }),
  ),
  startedAt: nullable(Timestamp),
  finishedAt: nullable(Timestamp),
});
export type NodeRunDetail = Static<typeof NodeRunDetail>;

/** NodeRunListResponse (GET .../runs/{run_id}/nodes): one page of node runs, by startedAt. */
export const NodeRunListResponse = Type.Object({
  runId: Type.String(),
  workflowId: Type.String(),
  nodeRuns: Type.Array(NodeRunDetail),
  pagination: Pagination,
});

/** Query of GET .../runs/{run_id}/nodes: `perPage` 1..100, default 100 (a run of up to 100 node runs fits one page, as in the spec). */
export const NodeRunListQuery = Type.Object({
  page: PageQuery.properties.page,
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: NODE_RUN_PAGE_SIZE, default: NODE_RUN_PAGE_SIZE })),
});
export type NodeRunListQuery = Static<typeof NodeRunListQuery>;
export type NodeRunListResponse = Static<typeof NodeRunListResponse>;

/** RunStateView (run-state.md): the derived "what is this run doing right now" (run-state.ts `deriveRunState`). */
export const RunStateViewSchema = Type.Object({
  runId: Type.String(),
  state: Type.Enum([...RUN_STATES]),
  blocked: Type.Optional(
    Type.Union([
      Type.Object(
        {
          kind: Type.Literal('approval'),
          nodeId: Type.String({ description: "The stepId of the oldest undecided gate; for a human request, the asking node's id" }),
          requestId: Type.Optional(Type.String({ description: 'Human requests only: the id of the oldest open request (answer it with /approve, stepId = requestId)' })),
          requestedAt: Timestamp,
        },
        {
          description:
            'A person must act: the oldest undecided gate of a run awaiting approval, or the oldest open human request (an agent asking, e.g. ask_human) of a run whose step waits on it (this wins over a retry backoff)',
        },
      ),
      Type.Object({ kind: Type.Literal('timer'), nodeId: Type.String({ description: 'The step waiting in retry backoff' }), wakeAt: Timestamp }),
    ]),
  ),
  unhealthy: Type.Optional(Type.Object({ kind: Type.Literal('engine-heartbeat-stale'), lastHeartbeatAt: Timestamp })),
  computedAt: Timestamp,
});

/** How many node runs of a run are in each status: all of them, not only the ones a response lists. */
export const NodeStatusCounts = Type.Object(
  {
    pending: Type.Integer(),
    running: Type.Integer(),
    awaiting_approval: Type.Integer(),
    completed: Type.Integer(),
    failed: Type.Integer(),
    skipped: Type.Integer(),
    cancelled: Type.Integer(),
  },
  { description: "How many of the run's node runs (all of them, not only those listed in nodeRuns) are in each status" },
);
export type NodeStatusCounts = Static<typeof NodeStatusCounts>;

const runFields = {
  id: Type.String(),
  workflowDefinitionId: Type.String(),
  workflowVersion: Type.Integer(),
  status: RunStatusSchema,
  triggerSource: Type.String(),
  startedAt: Timestamp,
  finishedAt: nullable(Timestamp),
  parentRunId: nullable(Type.String()),
  scheduleId: nullable(Type.String({ description: 'The schedule whose tick started the run (`triggerSource: "schedule"`)' })),
  scheduledAt: nullable({ ...Timestamp, description: "The schedule's tick the run is for (before jitter)" }),
  eventId: nullable(Type.String({ description: 'The event that started the run (`triggerSource: "event"`)' })),
  errorSummary: nullable(Type.String()),
  pausedAt: nullable(Timestamp),
  pendingDirective: nullable(Type.Enum([...PENDING_DIRECTIVES], { description: 'A pause, cancel or timeout its runner has yet to honour' })),
  cancelReason: nullable(Type.String({ description: 'The reason given with cancel (or the timeout)' })),
  cancelledBy: nullable({ ...ActorSchema, description: 'Who cancelled: the caller of /cancel, or `{ username: "timeout", via: "system" }`' }),
  triggeredBy: { ...ActorSchema, description: 'Who triggered the run (or the retry, replay or rerun that made it)' },
  timeoutSeconds: nullable(Type.Integer({ description: 'The trigger option: the run is stopped (failed) if it has not ended this long after its trigger' })),
  deadlineAt: nullable(Timestamp),
  nodeRuns: Type.Array(NodeRunDetail, { description: 'The first node runs by startedAt (at most 100); nodeRunsUrl lists them all, page by page' }),
  nodeRunCount: Type.Integer({ description: 'How many node runs the run has' }),
  nodeRunsUrl: Type.String({ description: 'Path of the paginated node-run list of this run' }),
  nodeStatusCounts: NodeStatusCounts,
  activeNodeIds: Type.Array(Type.String(), {
    maxItems: MAX_ACTIVE_NODE_IDS,
    description: `Ids of the nodes with a node run running or awaiting approval (containers included), distinct, sorted, at most ${MAX_ACTIVE_NODE_IDS}`,
  }),
  runState: RunStateViewSchema,
};

/** One row of GET /workflows/{id}/runs (with its node runs, as in the spec). */
export const RunSummary = Type.Object(runFields);
export type RunSummary = Static<typeof RunSummary>;

/** The definition a run executes, frozen at trigger time. */
export const DefinitionSnapshot = Type.Object({
  name: Type.String(),
  description: nullable(Type.String()),
  canvas: WorkflowCanvas,
  nodes: Type.Array(WorkflowNode),
});
export type DefinitionSnapshot = Static<typeof DefinitionSnapshot>;

/** GET /workflows/{id}/runs/{run_id}. */
export const RunDetail = Type.Object({
  ...runFields,
  initialInput: JsonObject,
  finalOutput: nullable(JsonValue),
  definitionSnapshot: DefinitionSnapshot,
  resolvedDependencies: Type.Array(ResolvedDependency),
  pendingRequirements: Type.Array(StepRequirementSummary, {
    description:
      'What waits on a person now, in the order raised: the undecided gates while the run awaits approval, and the open human requests (agents asking) until the run ends; empty once it has ended',
  }),
  requirements: Type.Array(RequirementRecordView, { description: 'Every HITL gate the run raised, in order, decided or not, with its decision' }),
});
export type RunDetail = Static<typeof RunDetail>;

/** Query of GET /workflows/{id}/runs. */
/** `includeNodeRuns=false`: run rows without their first node runs (`nodeRuns: []`; counts and `nodeRunCount` stay). */
export const IncludeNodeRuns = Type.Optional(
  Type.Boolean({ default: true, description: 'false: leave out each row\'s first node runs (nodeRuns is []); nodeStatusCounts, activeNodeIds and nodeRunCount stay. Much cheaper for long pages' }),
);

export const RunListQuery = Type.Object({
  status: Type.Optional(RunStatusSchema),
  includeNodeRuns: IncludeNodeRuns,
  ...PageQuery.properties,
});
export type RunListQuery = Static<typeof RunListQuery>;

export const RunListResponse = Type.Object({
  runs: Type.Array(RunSummary),
  pagination: Pagination,
});
export type RunListResponse = Static<typeof RunListResponse>;

/** Body of POST .../runs/{run_id}/retry (both optional: without them, every completed node run is reused and the input kept). */
export const RetryRunBody = Type.Object(
  {
    resolvedDependencies: Type.Optional(nullable(Type.Array(ResolvedDependency))),
    initialInput: Type.Optional(nullable(JsonObject)),
  },
  CLOSED,
);
export type RetryRunBody = Static<typeof RetryRunBody>;

/** 202 response of retry, replay and node rerun: the child run (spec: `run_id`; camelCase `runId` too). */
export const ChildRunResponse = Type.Object({
  runId: Type.String(),
  run_id: Type.String({ description: 'The same id, under the spec name' }),
  parentRunId: Type.String(),
  status: RunStatusSchema,
  triggerSource: Type.String(),
  message: Type.String(),
});
export type ChildRunResponse = Static<typeof ChildRunResponse>;

/** Body of POST .../runs/{run_id}/cancel (optional). */
export const CancelRunBody = Type.Object(
  {
    reason: Type.Optional(nullable(Type.String({ maxLength: 2000, description: 'Why the run is cancelled; stored on the run (`cancelReason`) and in its error summary' }))),
  },
  CLOSED,
);
export type CancelRunBody = Static<typeof CancelRunBody>;

/** 200 response of pause, resume and cancel. */
export const DirectiveResponse = Type.Object({
  runId: Type.String(),
  status: RunStatusSchema,
  message: Type.String({ description: 'What happened, or what will happen once the executing nodes finish' }),
  pendingDirective: nullable(Type.Enum([...PENDING_DIRECTIVES], { description: 'A directive the run\'s runner has yet to honour (the run is still `running`)' })),
  changed: Type.Boolean({ description: 'False when the directive already held (e.g. pause of a paused run): nothing was done' }),
  stepsCompleted: Type.Integer({ description: 'Step node runs of the run that completed so far (each loop iteration counts)' }),
});
export type DirectiveResponse = Static<typeof DirectiveResponse>;

/** Body of POST .../runs/{run_id}/nodes/{node_id}/rerun (optional). */
export const RerunNodeBody = Type.Object(
  {
    iterationPath: Type.Optional(
      nullable(
        Type.String({
          maxLength: 512,
          description: "Inside a loop, which iteration to rerun: its path as node runs show it ('3', '2/1', '3r1' for a re-run iteration); default the target's last",
        }),
      ),
    ),
  },
  CLOSED,
);
export type RerunNodeBody = Static<typeof RerunNodeBody>;
