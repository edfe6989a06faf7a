/**
 * Definition validation and normalization (spec endpoint 3 "Validation Rules", "HumanReview"
 * node-type matrix, "StepConfig", "LoopConfig", "RouterChoice").
 *
 * `normalizeDefinition` turns client input into complete {@link WorkflowNode} trees: defaults
 * filled, ids generated when absent, every container list present. It collects every problem,
 * each naming the node and its path (e.g. `Node 'Check' (nodes[1].trueSteps[0])`), and throws
 * one InvalidRequestError listing them all. Bounds keep a definition reasonable to store and run:
 * {@link DEFINITION_LIMITS} and {@link MAX_TOTAL_LOOP_ITERATIONS} for nested loops.
 *
 * Things this pure module cannot know — whether an executor key exists, whether a CEL expression
 * compiles — are asked through {@link DefinitionChecks}, which the runner implements.
 */
import { randomUUID } from 'node:crypto';
import { InvalidRequestError } from './errors.ts';
import { MAX_USER_JSON_DEPTH, jsonDepth } from './mapping.ts';
import type {
  HumanReview,
  LoopConfig,
  NodeType,
  StepConfig,
  UserInputField,
  WorkflowCanvas,
  WorkflowNode,
  WorkflowNodeInput,
} from './schemas/workflow.ts';

/** Where a CEL expression is used; decides which variables it may reference. */
/** `trigger`: an event trigger's `filterCel` / `inputCel` (reads only `event`, triggers.ts). */
export type ExpressionKind = 'condition' | 'router' | 'loop_end' | 'argument' | 'trigger';

/** Checks that need the runner (executor registry, CEL). */
export interface DefinitionChecks {
  /** True when `key` names a configured executor. */
  hasExecutor(key: string): boolean;
  /**
   * Null when `key` may stand in an `a2aPool`, else why not (e.g. an unknown key, or an executor of
   * a kind that is no agent). The runner decides by the key's executor kind.
   */
  checkPoolMember(key: string): string | null;
  /** Null when `expression` is valid as `kind`, else a message saying what is wrong. */
  checkExpression(expression: string, kind: ExpressionKind): string | null;
  /** Problems of the `$cel` expressions inside a step `config`, each as `<json path>: <message>`. */
  checkConfig(config: Record<string, unknown>): string[];
  /** Most nodes one definition may have, all levels counted (default {@link DEFAULT_MAX_NODES}). */
  readonly maxNodes?: number;
  /** Most step executions one definition may imply, every loop iteration counted (default {@link DEFAULT_MAX_STEP_EXECUTIONS}). */
  readonly maxStepExecutions?: number;
}

/** Default of {@link DefinitionChecks.maxNodes} (`SWITCHYARD_MAX_NODES`). */
export const DEFAULT_MAX_NODES = 2_000;

/**
 * Default of {@link DefinitionChecks.maxStepExecutions} (`SWITCHYARD_MAX_STEP_EXECUTIONS`): the sum,
 * over every step node, of the product of `maxIterations` of the loops enclosing it. Each chain of
 * nested loops is bounded by {@link MAX_TOTAL_LOOP_ITERATIONS}, but many sibling steps under such
 * chains multiply again (153 nodes could imply 15 million executions).
 */
export const DEFAULT_MAX_STEP_EXECUTIONS = 200_000;

/** Bounds that keep one definition reasonable to store and interpret. */
export const DEFINITION_LIMITS = { maxDepth: 20, maxA2aPool: 5, minParallelChildren: 2, minRouterChoices: 2 } as const;

/**
 * Most iterations a chain of nested loops may run: the product of `maxIterations` along every
 * chain of loops nested in one another (through any parallel, condition or router in between)
 * must not exceed it. Sequential loops are separate chains. Without it, three nested loops of
 * 1,000 would ask for 10^9 node executions.
 */
export const MAX_TOTAL_LOOP_ITERATIONS = 100_000;

/** Node ids: safe inside gate addresses (`<id>@<path>:review`) and keys; UUIDs and ObjectIds fit. */
export const NODE_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** Defaults of StepConfig (spec "StepConfig"; `timeoutSeconds` is an extension: null = the executor's own limit). Seconds. */
export const STEP_CONFIG_DEFAULTS: StepConfig = { maxRetries: 0, onError: 'fail', backoffBaseSeconds: 1.0, backoffMaxSeconds: 60.0, timeoutSeconds: null };

type HumanReviewInput = NonNullable<WorkflowNodeInput['humanReview']>;
type HitlField = 'requiresConfirmation' | 'requiresUserInput' | 'requiresOutputReview' | 'requiresIterationReview';

/** Node-type x HumanReview field matrix (spec "HumanReview"). Parallel nodes allow none. */
const HITL_MATRIX: Record<HitlField, readonly NodeType[]> = {
  requiresConfirmation: ['step', 'condition', 'loop', 'router'],
  requiresUserInput: ['step', 'router'],
  requiresOutputReview: ['step', 'router'],
  requiresIterationReview: ['loop'],
};

type ContainerField = 'children' | 'trueSteps' | 'falseSteps' | 'choices';
/** Which container lists each node type may (and must) use. */
const CONTAINERS: Record<NodeType, readonly ContainerField[]> = {
  step: [],
  parallel: ['children'],
  loop: ['children'],
  condition: ['trueSteps', 'falseSteps'],
  router: ['choices'],
};

/** Normalizes the viewport: x and y default to 0, zoom to 1. */
export function normalizeCanvas(canvas: { viewport: { x?: number; y?: number; zoom?: number } }): WorkflowCanvas {
  const { x = 0, y = 0, zoom = 1 } = canvas.viewport;
  if (!(zoom > 0)) throw new InvalidRequestError('canvas.viewport.zoom must be > 0');
  return { viewport: { x, y, zoom } };
}

/**
 * Normalizes workflow tags (their characters, length and number are checked by the body schema):
 * duplicates dropped, first occurrence first; absent is [].
 */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  return [...new Set(tags ?? [])];
}

/**
 * Validates and normalizes a node list. Throws InvalidRequestError (400) with every problem in
 * `problems` when anything is wrong.
 */
export function normalizeDefinition(nodes: readonly WorkflowNodeInput[], checks: DefinitionChecks): WorkflowNode[] {
  const ctx: WalkContext = { checks, problems: [], ids: new Set(), count: 0, stepExecutions: 0, loopChainTooLong: false };
  if (nodes.length === 0) ctx.problems.push('A workflow needs at least one root node');
  const result = nodes.map((node, i) => normalizeNode(node, `nodes[${i}]`, 1, [], ctx));
  const maxNodes = checks.maxNodes ?? DEFAULT_MAX_NODES;
  if (ctx.count > maxNodes) ctx.problems.push(`A workflow may have at most ${maxNodes} nodes, this one has ${ctx.count}`);
  const maxStepExecutions = checks.maxStepExecutions ?? DEFAULT_MAX_STEP_EXECUTIONS;
  // A chain of loops over its own bound is reported at its loop already.
  if (ctx.stepExecutions > maxStepExecutions && !ctx.loopChainTooLong) {
    const count = (n: number) => n.toLocaleString('en-US');
    ctx.problems.push(
      `A run of this workflow could execute up to ${count(ctx.stepExecutions)} steps (every step times the maxIterations of the loops around it); ` +
        `at most ${count(maxStepExecutions)} are allowed (SWITCHYARD_MAX_STEP_EXECUTIONS)`,
    );
  }
  if (ctx.problems.length > 0) {
    const head = ctx.problems.length === 1 ? ctx.problems[0]! : `${ctx.problems.length} problems: ${ctx.problems.join('; ')}`;
    throw new InvalidRequestError(`Invalid workflow definition: ${head}`, ctx.problems);
  }
  return result;
}

/** One loop enclosing a node: its name and `maxIterations`. */
interface LoopLink {
  name: string;
  maxIterations: number;
}

/** The product of `maxIterations` along `loops`. */
function totalIterations(loops: readonly LoopLink[]): number {
  return loops.reduce((product, loop) => product * loop.maxIterations, 1);
}

/**
 * The loops enclosing the children of `input` (`enclosing` plus `input` itself when it is a
 * loop), reporting a problem on the loop whose `maxIterations` first takes the chain above
 * {@link MAX_TOTAL_LOOP_ITERATIONS} (loops deeper in an already reported chain are not reported again).
 */
function loopChain(input: WorkflowNodeInput, enclosing: readonly LoopLink[], problem: (m: string) => void): readonly LoopLink[] {
  if (input.nodeType !== 'loop' || !input.loopConfig) return enclosing;
  const chain = [...enclosing, { name: input.name, maxIterations: input.loopConfig.maxIterations }];
  const total = totalIterations(chain);
  if (total > MAX_TOTAL_LOOP_ITERATIONS && totalIterations(enclosing) <= MAX_TOTAL_LOOP_ITERATIONS) {
    const count = (n: number) => n.toLocaleString('en-US');
    const factors = chain.map((loop) => `'${loop.name}' ${count(loop.maxIterations)}`).join(' × ');
    problem(
      `loopConfig.maxIterations: nested loops would run up to ${count(total)} iterations (${factors}); ` +
        `the product of maxIterations along nested loops may be at most ${count(MAX_TOTAL_LOOP_ITERATIONS)}`,
    );
  }
  return chain;
}

interface WalkContext {
  checks: DefinitionChecks;
  problems: string[];
  ids: Set<string>;
  count: number;
  /** Step executions implied so far: per step, the product of its enclosing loops' maxIterations. */
  stepExecutions: number;
  /** A chain of nested loops exceeded {@link MAX_TOTAL_LOOP_ITERATIONS} (reported on its loop). */
  loopChainTooLong: boolean;
}

/** `loops`: the loops enclosing `input`, outermost first. */
function normalizeNode(input: WorkflowNodeInput, path: string, depth: number, loops: readonly LoopLink[], ctx: WalkContext): WorkflowNode {
  ctx.count += 1;
  const label = `Node '${input.name}' (${path})`;
  const problem = (message: string) => ctx.problems.push(`${label}: ${message}`);
  const type = input.nodeType;

  const id = input.id ?? randomUUID();
  if (ctx.ids.has(id)) problem(`duplicate node id '${id}'`);
  if (!NODE_ID_PATTERN.test(id)) problem(`node id '${id}' may only use letters, digits, '_', '.' and '-' (at most 128)`);
  ctx.ids.add(id);
  if (depth > DEFINITION_LIMITS.maxDepth) {
    problem(`nesting deeper than ${DEFINITION_LIMITS.maxDepth} levels`);
    return emptyNode(id, input);
  }

  checkContainers(input, type, problem);
  const inner = loopChain(input, loops, problem);
  if (inner !== loops && totalIterations(inner) > MAX_TOTAL_LOOP_ITERATIONS) ctx.loopChainTooLong = true;
  const children = (input.children ?? []).map((c, i) => normalizeNode(c, `${path}.children[${i}]`, depth + 1, inner, ctx));
  const trueSteps = (input.trueSteps ?? []).map((c, i) => normalizeNode(c, `${path}.trueSteps[${i}]`, depth + 1, inner, ctx));
  const falseSteps = (input.falseSteps ?? []).map((c, i) => normalizeNode(c, `${path}.falseSteps[${i}]`, depth + 1, inner, ctx));
  const choices = (input.choices ?? []).map((choice, i) => ({
    name: choice.name,
    steps: choice.steps.map((c, j) => normalizeNode(c, `${path}.choices[${i}].steps[${j}]`, depth + 1, inner, ctx)),
  }));

  const humanReview = input.humanReview ? normalizeHumanReview(input.humanReview, type, problem) : null;
  const config = input.config ?? {};
  if (jsonDepth(config) > MAX_USER_JSON_DEPTH) problem(`config nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
  const executorKey = input.executorKey ?? null;
  const a2aPool = input.a2aPool ?? [];

  if (type === 'step') {
    ctx.stepExecutions += totalIterations(loops);
    checkStepExecutors(executorKey, a2aPool, ctx.checks, problem);
    for (const message of ctx.checks.checkConfig(config as Record<string, unknown>)) problem(message);
  } else {
    if (executorKey !== null) problem(`${type} nodes must not define executorKey`);
    if (a2aPool.length > 0) problem(`${type} nodes must not define a2aPool`);
    if (input.stepConfig) problem(`${type} nodes must not define stepConfig (it is meaningful only for step nodes)`);
  }

  const conditionCel = input.conditionCel ?? null;
  if (type === 'condition' || type === 'router') {
    const humanPicksRoute = type === 'router' && humanReview?.requiresUserInput === true;
    if (conditionCel === null) {
      if (!humanPicksRoute) problem(`${type} nodes need conditionCel`);
    } else {
      const error = ctx.checks.checkExpression(conditionCel, type);
      if (error) problem(`conditionCel: ${error}`);
    }
  } else if (conditionCel !== null) {
    problem(`${type} nodes must not define conditionCel`);
  }

  let loopConfig: LoopConfig | null = null;
  if (type === 'loop') {
    if (!input.loopConfig) problem('loop nodes need loopConfig');
    else {
      loopConfig = { maxIterations: input.loopConfig.maxIterations, endConditionCel: input.loopConfig.endConditionCel ?? null };
      if (loopConfig.endConditionCel !== null) {
        const error = ctx.checks.checkExpression(loopConfig.endConditionCel, 'loop_end');
        if (error) problem(`loopConfig.endConditionCel: ${error}`);
      }
    }
  } else if (input.loopConfig) {
    problem(`${type} nodes must not define loopConfig`);
  }

  return {
    id,
    name: input.name,
    nodeType: type,
    position: { x: input.position?.x ?? 0, y: input.position?.y ?? 0 },
    executorKey,
    a2aPool,
    stepConfig: type === 'step' && input.stepConfig ? normalizeStepConfig(input.stepConfig) : null,
    config,
    children,
    trueSteps,
    falseSteps,
    choices,
    conditionCel,
    loopConfig,
    humanReview,
  };
}

/** StepConfig with defaults; unknown keys are dropped (ignored, like unknown node fields). */
function normalizeStepConfig(input: NonNullable<WorkflowNodeInput['stepConfig']>): StepConfig {
  const d = STEP_CONFIG_DEFAULTS;
  return {
    maxRetries: input.maxRetries ?? d.maxRetries,
    onError: input.onError ?? d.onError,
    backoffBaseSeconds: input.backoffBaseSeconds ?? d.backoffBaseSeconds,
    backoffMaxSeconds: input.backoffMaxSeconds ?? d.backoffMaxSeconds,
    timeoutSeconds: input.timeoutSeconds ?? d.timeoutSeconds,
  };
}

function emptyNode(id: string, input: WorkflowNodeInput): WorkflowNode {
  return {
    id, name: input.name, nodeType: input.nodeType, position: { x: 0, y: 0 }, executorKey: null, a2aPool: [], stepConfig: null,
    config: {}, children: [], trueSteps: [], falseSteps: [], choices: [], conditionCel: null, loopConfig: null, humanReview: null,
  };
}

function checkContainers(input: WorkflowNodeInput, type: NodeType, problem: (m: string) => void): void {
  const allowed = CONTAINERS[type];
  for (const field of ['children', 'trueSteps', 'falseSteps', 'choices'] as const) {
    const list = input[field] ?? [];
    if (list.length > 0 && !allowed.includes(field)) problem(`${type} nodes must not have ${field}`);
  }
  const count = (field: ContainerField) => (input[field] ?? []).length;
  if (type === 'parallel' && count('children') < DEFINITION_LIMITS.minParallelChildren) {
    problem(`parallel nodes need at least ${DEFINITION_LIMITS.minParallelChildren} children`);
  }
  if (type === 'loop' && count('children') < 1) problem('loop nodes need at least 1 child');
  if (type === 'parallel') {
    const names = (input.children ?? []).map((c) => c.name);
    for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i))) {
      problem(`parallel children need unique names (their outputs are keyed by name): '${name}' appears twice`);
    }
  }
  if (type === 'condition' && count('trueSteps') < 1) problem('condition nodes need at least 1 step in trueSteps');
  if (type === 'router') {
    const choices = input.choices ?? [];
    if (choices.length < DEFINITION_LIMITS.minRouterChoices) problem(`router nodes need at least ${DEFINITION_LIMITS.minRouterChoices} choices`);
    const seen = new Set<string>();
    for (const choice of choices) {
      if (seen.has(choice.name)) problem(`duplicate router choice name '${choice.name}'`);
      seen.add(choice.name);
      if (choice.steps.length === 0) problem(`router choice '${choice.name}' needs at least 1 step`);
    }
  }
}

function checkStepExecutors(executorKey: string | null, a2aPool: readonly string[], checks: DefinitionChecks, problem: (m: string) => void): void {
  if (executorKey !== null && a2aPool.length > 0) problem('step nodes take either executorKey or a2aPool, not both');
  if (executorKey === null && a2aPool.length === 0) problem('step nodes need an executorKey or an a2aPool');
  if (executorKey !== null && !checks.hasExecutor(executorKey)) problem(`unknown executorKey '${executorKey}'`);
  if (a2aPool.length > DEFINITION_LIMITS.maxA2aPool) problem(`a2aPool may list at most ${DEFINITION_LIMITS.maxA2aPool} agents, got ${a2aPool.length}`);
  const seen = new Set<string>();
  for (const key of a2aPool) {
    if (seen.has(key)) problem(`a2aPool lists '${key}' twice`);
    seen.add(key);
    const why = checks.checkPoolMember(key);
    if (why !== null) problem(why);
  }
}

function normalizeHumanReview(input: HumanReviewInput, type: NodeType, problem: (m: string) => void): HumanReview {
  if (type === 'parallel') {
    problem('parallel nodes do not support humanReview (their branches run concurrently)');
  }
  const review: HumanReview = {
    requiresConfirmation: input.requiresConfirmation ?? false,
    confirmationMessage: input.confirmationMessage ?? null,
    requiresUserInput: input.requiresUserInput ?? false,
    userInputMessage: input.userInputMessage ?? null,
    userInputSchema: (input.userInputSchema ?? []).map(normalizeUserInputField),
    requiresOutputReview: input.requiresOutputReview ?? false,
    outputReviewMessage: input.outputReviewMessage ?? null,
    requiresIterationReview: input.requiresIterationReview ?? false,
    iterationReviewMessage: input.iterationReviewMessage ?? null,
    onReject: input.onReject ?? 'cancel',
    timeoutSeconds: input.timeoutSeconds ?? null,
    onTimeout: input.onTimeout ?? 'cancel',
    maxRetries: input.maxRetries ?? 3,
    allowMultipleSelections: input.allowMultipleSelections ?? false,
    // Only when set, so that definitions without them keep their stored shape (issue #18).
    ...(input.approvers ? { approvers: [...new Set(input.approvers)] } : {}),
    ...(input.allowSelfApproval === false ? { allowSelfApproval: false } : {}),
  };
  if (type !== 'parallel') {
    for (const field of Object.keys(HITL_MATRIX) as HitlField[]) {
      if (review[field] && !HITL_MATRIX[field].includes(type)) problem(`humanReview.${field} is not supported on ${type} nodes`);
    }
  }
  if (review.onReject === 'else_branch' && type !== 'condition') problem('humanReview.onReject else_branch is only valid on condition nodes');
  if (review.timeoutSeconds !== null && !(review.timeoutSeconds > 0)) problem('humanReview.timeoutSeconds must be > 0');
  if (review.allowMultipleSelections && !(type === 'router' && review.requiresUserInput)) {
    problem('humanReview.allowMultipleSelections needs a router with requiresUserInput (route selection)');
  }
  if (type === 'step' && review.requiresUserInput && review.userInputSchema.length === 0) {
    problem('humanReview.requiresUserInput on a step needs a non-empty userInputSchema');
  }
  const names = new Set<string>();
  for (const field of review.userInputSchema) {
    if (jsonDepth(field.defaultValue) > MAX_USER_JSON_DEPTH || jsonDepth(field.allowedValues) > MAX_USER_JSON_DEPTH) {
      problem(`humanReview.userInputSchema field '${field.name}' nests deeper than ${MAX_USER_JSON_DEPTH} levels`);
    }
    if (names.has(field.name)) problem(`humanReview.userInputSchema lists field '${field.name}' twice`);
    names.add(field.name);
  }
  return review;
}

function normalizeUserInputField(input: NonNullable<HumanReviewInput['userInputSchema']>[number]): UserInputField {
  // `required` defaults to true, as the runtime payload's does (spec "PendingUserInputField").
  const field: UserInputField = { name: input.name, fieldType: input.fieldType, description: input.description ?? null, required: input.required ?? true };
  if (input.defaultValue !== undefined) field.defaultValue = input.defaultValue;
  if (input.allowedValues) field.allowedValues = input.allowedValues;
  return field;
}

/** Counts the nodes of a tree at every depth (the list endpoint's `numNodes`). */
export function countNodes(nodes: readonly WorkflowNode[]): number {
  let total = 0;
  for (const node of walkNodes(nodes)) total += node ? 1 : 0;
  return total;
}

/** Yields every node of a tree, depth-first in definition order. */
export function* walkNodes(nodes: readonly WorkflowNode[]): Generator<WorkflowNode> {
  for (const node of nodes) {
    yield node;
    yield* walkNodes(node.children);
    yield* walkNodes(node.trueSteps);
    yield* walkNodes(node.falseSteps);
    for (const choice of node.choices) yield* walkNodes(choice.steps);
  }
}
