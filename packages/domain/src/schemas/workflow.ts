/**
 * Workflow definition schemas (spec "Data Models": WorkflowCanvas, WorkflowNode, HumanReview,
 * UserInputField, RouterChoice, StepConfig, LoopConfig; endpoints 1-6).
 *
 * Two node shapes exist on purpose:
 * - `WorkflowNodeInput`: what clients send. Everything but `name` and `nodeType` is optional;
 *   unknown fields (e.g. legacy `requireApproval`) are a 400 naming the field (issue #16 item 6:
 *   the spec ignores them, which lets any foreign JSON envelope pass as a body).
 * - `WorkflowNode`: what the API returns and the runner executes. Always complete: `children`,
 *   `trueSteps`, `falseSteps`, `choices` are lists, absent scalars are null, ids are set.
 */
import Type, { type Static } from 'typebox';
import { CLOSED, JsonObject, PageQuery, Pagination, Timestamp } from './common.ts';
import { MAX_PRINCIPALS_PER_ROLE, Principal, WorkflowAccess } from '../access.ts';

export const NODE_TYPES = ['step', 'parallel', 'loop', 'condition', 'router'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const ON_ERROR_POLICIES = ['fail', 'skip', 'retry'] as const;
export const ON_REJECT_POLICIES = ['skip', 'cancel', 'retry', 'else_branch'] as const;
export const ON_TIMEOUT_POLICIES = ['approve', 'skip', 'cancel'] as const;
export const USER_INPUT_FIELD_TYPES = ['string', 'number', 'boolean', 'array'] as const;

export const Position = Type.Object({ x: Type.Number({ default: 0 }), y: Type.Number({ default: 0 }) });
export type Position = Static<typeof Position>;

const PositionInput = Type.Object({ x: Type.Optional(Type.Number()), y: Type.Optional(Type.Number()) }, CLOSED);

/** WorkflowCanvas: frontend viewport. `zoom` must be > 0. */
export const WorkflowCanvas = Type.Object(
  {
    viewport: Type.Object({
      x: Type.Number(),
      y: Type.Number(),
      zoom: Type.Number(),
    }),
  },
  { title: 'WorkflowCanvas' },
);
export type WorkflowCanvas = Static<typeof WorkflowCanvas>;

const WorkflowCanvasInput = Type.Object(
  {
    viewport: Type.Object(
      {
        x: Type.Optional(Type.Number()),
        y: Type.Optional(Type.Number()),
        zoom: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      },
      CLOSED,
    ),
  },
  CLOSED,
);

/** Bounds of `stepConfig.timeoutSeconds` (and of an executor's `timeoutSeconds` in the registry): 1 s to a day. */
export const STEP_TIMEOUT_SECONDS_RANGE = { minimum: 1, maximum: 86_400 } as const;

/** StepConfig: retry, error and time policy of a step. Seconds, not milliseconds. */
export const StepConfig = Type.Object({
  maxRetries: Type.Integer({ minimum: 0, maximum: 100, description: 'Retries after the first attempt (default 0)' }),
  onError: Type.Enum([...ON_ERROR_POLICIES], {
    description: 'After the last attempt fails: fail (node and run fail), skip (node skipped, run goes on), retry (same as fail once retries are spent)',
  }),
  backoffBaseSeconds: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, description: 'Wait before the first retry, seconds (default 1.0, at most a day)' }),
  backoffMaxSeconds: Type.Number({ exclusiveMinimum: 0, maximum: 86_400, description: 'Cap of any retry wait, seconds (default 60.0, at most a day)' }),
  timeoutSeconds: Type.Union([Type.Number(STEP_TIMEOUT_SECONDS_RANGE), Type.Null()], {
    // Definitions stored before this field existed lack it: they read (and serialize) as null.
    default: null,
    description:
      "Extension: limit of one executor call, seconds (1 to 86400). A call still running then is aborted and its attempt fails with 'timed out after N s' (retryable, so maxRetries applies; in an a2aPool the next agent is tried). Default null: the executor's own limit from the registry (its timeoutSeconds, else 60 s)",
  }),
});
export type StepConfig = Static<typeof StepConfig>;

const StepConfigInput = Type.Partial(StepConfig, CLOSED);

/** LoopConfig: `maxIterations` >= 1; `endConditionCel` is evaluated after each iteration. */
export const LoopConfig = Type.Object({
  maxIterations: Type.Integer({ minimum: 1 }),
  endConditionCel: Type.Union([Type.String(), Type.Null()]),
});
export type LoopConfig = Static<typeof LoopConfig>;

const LoopConfigInput = Type.Object(
  {
    maxIterations: Type.Integer({ minimum: 1, maximum: 1000 }),
    endConditionCel: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  CLOSED,
);

/** UserInputField: one field of a human form (authoring shape). */
export const UserInputField = Type.Object({
  name: Type.String({ minLength: 1 }),
  fieldType: Type.Enum([...USER_INPUT_FIELD_TYPES]),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  required: Type.Boolean(),
  defaultValue: Type.Optional(Type.Unknown()),
  allowedValues: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
});
export type UserInputField = Static<typeof UserInputField>;

const UserInputFieldInput = Type.Object({
  name: Type.String({ minLength: 1 }),
  fieldType: Type.Enum([...USER_INPUT_FIELD_TYPES]),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  required: Type.Optional(Type.Boolean()),
  defaultValue: Type.Optional(Type.Unknown()),
  allowedValues: Type.Optional(Type.Union([Type.Array(Type.Unknown()), Type.Null()])),
}, CLOSED);

/** `humanReview.approvers` (issue #18): who alone may decide the node's gates. */
export const GateApprovers = Type.Array(Principal, {
  minItems: 1,
  maxItems: MAX_PRINCIPALS_PER_ROLE,
  description:
    "Principals (`user:<sub>`, `group:<name>`, `*`) who alone may decide this node's gates; a named approver needs only the viewer role. Absent: the workflow's operators decide (extension, docs/guide/access-control.md)",
});

/** `humanReview.allowSelfApproval` (issue #18): false = four-eyes. */
export const AllowSelfApproval = Type.Boolean({
  description: "false (four-eyes): whoever triggered the run (or the retry, replay or rerun that made it) may not decide this node's gates (403 self_approval_forbidden). Default true (extension)",
});

/** HumanReview: per-node HITL configuration (spec "HumanReview"). */
export const HumanReview = Type.Object({
  requiresConfirmation: Type.Boolean(),
  confirmationMessage: Type.Union([Type.String(), Type.Null()]),
  requiresUserInput: Type.Boolean(),
  userInputMessage: Type.Union([Type.String(), Type.Null()]),
  userInputSchema: Type.Array(UserInputField),
  requiresOutputReview: Type.Boolean(),
  outputReviewMessage: Type.Union([Type.String(), Type.Null()]),
  requiresIterationReview: Type.Boolean(),
  iterationReviewMessage: Type.Union([Type.String(), Type.Null()]),
  onReject: Type.Enum([...ON_REJECT_POLICIES]),
  timeoutSeconds: Type.Union([Type.Number(), Type.Null()]),
  onTimeout: Type.Enum([...ON_TIMEOUT_POLICIES]),
  maxRetries: Type.Integer({ description: 'How often onReject retry may re-run the node before it fails (extension; default 3)' }),
  allowMultipleSelections: Type.Boolean({ description: 'Routers with requiresUserInput: the human may pick several choices, run in definition order (extension)' }),
  approvers: Type.Optional(GateApprovers),
  allowSelfApproval: Type.Optional(AllowSelfApproval),
});
export type HumanReview = Static<typeof HumanReview>;

const HumanReviewInput = Type.Object({
  requiresConfirmation: Type.Optional(Type.Boolean()),
  confirmationMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  requiresUserInput: Type.Optional(Type.Boolean()),
  userInputMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  userInputSchema: Type.Optional(Type.Union([Type.Array(UserInputFieldInput), Type.Null()])),
  requiresOutputReview: Type.Optional(Type.Boolean()),
  outputReviewMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  requiresIterationReview: Type.Optional(Type.Boolean()),
  iterationReviewMessage: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  onReject: Type.Optional(Type.Enum([...ON_REJECT_POLICIES])),
  timeoutSeconds: Type.Optional(Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 31_536_000, description: 'Seconds, at most one year' }), Type.Null()])),
  onTimeout: Type.Optional(Type.Enum([...ON_TIMEOUT_POLICIES])),
  maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  allowMultipleSelections: Type.Optional(Type.Boolean()),
  approvers: Type.Optional(Type.Union([GateApprovers, Type.Null()])),
  allowSelfApproval: Type.Optional(AllowSelfApproval),
}, CLOSED);

const nullableString = () => Type.Optional(Type.Union([Type.String(), Type.Null()]));

/** WorkflowNodeInput: a node as clients send it (create/update). Unknown fields are a 400. */
export const WorkflowNodeInput = Type.Cyclic(
  {
    WorkflowNodeInput: Type.Object(
      {
        id: nullableString(),
        name: Type.String({ minLength: 1 }),
        nodeType: Type.Enum([...NODE_TYPES]),
        position: Type.Optional(Type.Union([PositionInput, Type.Null()])),
        executorKey: nullableString(),
        a2aPool: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
        stepConfig: Type.Optional(Type.Union([StepConfigInput, Type.Null()])),
        config: Type.Optional(Type.Union([JsonObject, Type.Null()])),
        children: Type.Optional(Type.Union([Type.Array(Type.Ref('WorkflowNodeInput')), Type.Null()])),
        trueSteps: Type.Optional(Type.Union([Type.Array(Type.Ref('WorkflowNodeInput')), Type.Null()])),
        falseSteps: Type.Optional(Type.Union([Type.Array(Type.Ref('WorkflowNodeInput')), Type.Null()])),
        choices: Type.Optional(
          Type.Union([
            Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), steps: Type.Array(Type.Ref('WorkflowNodeInput')) }, CLOSED)),
            Type.Null(),
          ]),
        ),
        conditionCel: nullableString(),
        loopConfig: Type.Optional(Type.Union([LoopConfigInput, Type.Null()])),
        humanReview: Type.Optional(Type.Union([HumanReviewInput, Type.Null()])),
      },
      CLOSED,
    ),
  },
  'WorkflowNodeInput',
);
export type WorkflowNodeInput = Static<typeof WorkflowNodeInput>;

/** WorkflowNode: a complete, normalized node (responses, snapshots, the runner's input). */
export const WorkflowNode = Type.Cyclic(
  {
    WorkflowNode: Type.Object({
      id: Type.String(),
      name: Type.String(),
      nodeType: Type.Enum([...NODE_TYPES]),
      position: Position,
      executorKey: Type.Union([Type.String(), Type.Null()]),
      a2aPool: Type.Array(Type.String()),
      stepConfig: Type.Union([StepConfig, Type.Null()]),
      config: JsonObject,
      children: Type.Array(Type.Ref('WorkflowNode')),
      trueSteps: Type.Array(Type.Ref('WorkflowNode')),
      falseSteps: Type.Array(Type.Ref('WorkflowNode')),
      choices: Type.Array(Type.Object({ name: Type.String(), steps: Type.Array(Type.Ref('WorkflowNode')) })),
      conditionCel: Type.Union([Type.String(), Type.Null()]),
      loopConfig: Type.Union([LoopConfig, Type.Null()]),
      humanReview: Type.Union([HumanReview, Type.Null()]),
    }),
  },
  'WorkflowNode',
);
export type WorkflowNode = Static<typeof WorkflowNode>;
export type RouterChoice = WorkflowNode['choices'][number];

/** Most tags one workflow carries. */
export const MAX_WORKFLOW_TAGS = 20;

/** What a tag may hold: 1-50 letters, digits, spaces and `_ . : / -`. */
export const WORKFLOW_TAG_PATTERN = '^[A-Za-z0-9 _.:/-]{1,50}$';

const tagRules = { minLength: 1, maxLength: 50, pattern: WORKFLOW_TAG_PATTERN } as const;

/** One tag: free-form metadata to group and filter workflows (e.g. `team:billing`, `nightly`). */
export const WorkflowTag = Type.String({ ...tagRules, description: '1-50 characters: letters, digits, space, _ . : / -; compared exactly (case-sensitive)' });

/** Tags as clients send them: duplicates are dropped on save (first occurrence kept). */
const WorkflowTagsInput = Type.Array(WorkflowTag, {
  maxItems: MAX_WORKFLOW_TAGS,
  description: `At most ${MAX_WORKFLOW_TAGS}; duplicates are dropped. Metadata: a change does not bump version`,
});

/** `inputSchema` as clients send it: any JSON object, checked by domain input-schema.ts `checkInputSchema` (400 with problems at `/inputSchema...`). */
const InputSchemaInput = Type.Union([JsonObject, Type.Null()], {
  description:
    'Declared inputs (extension): a JSON Schema (draft 2020-12) the run input must match at trigger and dry run (400 naming each path, ' +
    "e.g. `/customerEmail: is required`); its `default`s are applied. At most 64 KiB as JSON and 32 levels deep; local `$ref`s (`#...`) only, " +
    'no `$id`; strict (unknown keywords and formats are refused). null or absent: any input. docs/guide/inputs.md',
});

/** Most event triggers one workflow declares. */
export const MAX_WORKFLOW_TRIGGERS = 20;

/** What an event name may hold (issue #21): 1-200 characters, a letter or digit first, then letters, digits and `. _ : -`. */
export const EVENT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$';

/** Longest `filterCel` / `inputCel` of a trigger, in characters (4 KiB). */
export const MAX_TRIGGER_CEL_LENGTH = 4096;

/** An event name (`order.created`): see {@link EVENT_NAME_PATTERN}. */
export const EventName = Type.String({ minLength: 1, maxLength: 200, pattern: EVENT_NAME_PATTERN, description: '1-200 characters: a letter or digit, then letters, digits and . _ : -; compared exactly' });

/**
 * One event trigger of a workflow (issue #21, docs/guide/event-triggers.md): an event named `event` starts
 * a run when `filterCel` (absent: always) is true; the run input is `inputCel`'s map (absent: the
 * event's `data`). Both expressions read the variable `event` (`{ id, name, data, receivedAt }`).
 */
export const WorkflowTrigger = Type.Object(
  {
    event: EventName,
    filterCel: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: MAX_TRIGGER_CEL_LENGTH }), Type.Null()], {
        description: 'CEL over `event` that must be true for the run to start, e.g. `event.data.total > 100.0`; null or absent: every event of that name',
      }),
    ),
    inputCel: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: MAX_TRIGGER_CEL_LENGTH }), Type.Null()], {
        description: "CEL over `event` giving the run input (must be a map), e.g. `{ 'orderId': event.data.id }`; null or absent: the event's `data`",
      }),
    ),
  },
  { ...CLOSED, title: 'WorkflowTrigger' },
);

/** A trigger as stored and returned: both expressions present (null when not set). */
export const WorkflowTriggerDetail = Type.Object({
  event: Type.String(),
  filterCel: Type.Union([Type.String(), Type.Null()]),
  inputCel: Type.Union([Type.String(), Type.Null()]),
});
export type WorkflowTriggerDetail = Static<typeof WorkflowTriggerDetail>;

/** `triggers` as clients send them. */
const WorkflowTriggersInput = Type.Array(WorkflowTrigger, {
  maxItems: MAX_WORKFLOW_TRIGGERS,
  description: `Event triggers (docs/guide/event-triggers.md), at most ${MAX_WORKFLOW_TRIGGERS}; expressions are checked on save (400 naming the trigger). A change bumps version`,
});

/** Body of POST /workflows. `enabled` cannot be set: workflows are created disabled. */
export const WorkflowCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])),
    canvas: WorkflowCanvasInput,
    nodes: Type.Array(WorkflowNodeInput),
    tags: Type.Optional(WorkflowTagsInput),
    inputSchema: Type.Optional(InputSchemaInput),
    triggers: Type.Optional(WorkflowTriggersInput),
  },
  CLOSED,
);
export type WorkflowCreateBody = Static<typeof WorkflowCreateBody>;

/** Body of PUT /workflows/{id}: every field optional. */
export const WorkflowUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])),
    canvas: Type.Optional(WorkflowCanvasInput),
    nodes: Type.Optional(Type.Array(WorkflowNodeInput)),
    enabled: Type.Optional(Type.Boolean()),
    tags: Type.Optional(WorkflowTagsInput),
    inputSchema: Type.Optional(InputSchemaInput),
    triggers: Type.Optional(WorkflowTriggersInput),
  },
  CLOSED,
);
export type WorkflowUpdateBody = Static<typeof WorkflowUpdateBody>;

/** Body of POST /workflows/{id}/toggle. */
export const ToggleBody = Type.Object({ enabled: Type.Boolean() }, CLOSED);
export type ToggleBody = Static<typeof ToggleBody>;

/** A stored workflow definition as the API returns it (endpoints 2-4, 6). */
export const WorkflowDetail = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    canvas: WorkflowCanvas,
    nodes: Type.Array(WorkflowNode),
    enabled: Type.Boolean(),
    tags: Type.Array(Type.String(), { description: 'Metadata for grouping and filtering (GET /workflows?tag=); [] when none' }),
    version: Type.Integer({ description: 'Bumped by every change of the definition (nodes, canvas, name, description, inputSchema, triggers); not by enabled or tags' }),
    inputSchema: Type.Union([JsonObject, Type.Null()], { description: 'Declared inputs: the JSON Schema (2020-12) the run input must match; null when any input goes (docs/guide/inputs.md)' }),
    triggers: Type.Array(WorkflowTriggerDetail, { description: 'Event triggers (docs/guide/event-triggers.md); [] when none' }),
    access: { ...WorkflowAccess, description: 'Who may do what (issue #18): change it with PUT /{workflow_id}/access (owners)' },
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WorkflowDetail' },
);
export type WorkflowDetail = Static<typeof WorkflowDetail>;

/** One row of GET /workflows. */
export const WorkflowSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  numNodes: Type.Integer({ description: 'Nodes at every depth of the tree' }),
  enabled: Type.Boolean(),
  tags: Type.Array(Type.String()),
  version: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  runningCount: Type.Optional(
    Type.Integer({ description: 'With includeRunning=true only: runs of the workflow that have not ended (pending, running, paused, awaiting_approval)' }),
  ),
});
export type WorkflowSummary = Static<typeof WorkflowSummary>;

/**
 * Query of GET /workflows: `query` searches name and description (case-insensitive, literal),
 * `tag` keeps the workflows carrying that tag, `includeRunning` adds `runningCount` to each row.
 */
export const WorkflowListQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 200 })),
  tag: Type.Optional(Type.String({ ...tagRules, description: 'Only workflows carrying this tag (exact, case-sensitive)' })),
  enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) workflows' })),
  includeRunning: Type.Optional(Type.Boolean({ description: 'Add runningCount (runs not ended) to each workflow; one more store read per listed workflow' })),
  ...PageQuery.properties,
});
export type WorkflowListQuery = Static<typeof WorkflowListQuery>;

export const WorkflowListResponse = Type.Object({
  workflows: Type.Array(WorkflowSummary),
  pagination: Pagination,
});
export type WorkflowListResponse = Static<typeof WorkflowListResponse>;
