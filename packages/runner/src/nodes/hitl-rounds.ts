/**
 * Rounds of a node's HITL gates (DESIGN.md "HITL v2"). A rejection under `onReject: retry` with
 * retries left asks the node again in the next round: its gates are raised anew (new gate keys),
 * and what follows them runs again. {@link inRounds} counts the rounds, {@link gateRound} asks one
 * gate and applies a decision that does not proceed.
 */
import type { GateRequest, RequirementRecord, WorkflowNode } from '@switchyard/domain';
import { RunCancelled, actionOf, gateOutcomeText, passGate, retryAllowed, type GateAction } from '../gates.ts';
import { NodeFailedError, type NodeResult } from '../step-runner.ts';
import type { NodeContext } from './context.ts';

/** A round was rejected and is to be asked again: `rejection` is the decision that rejected it. */
export class RetryRound {
  constructor(readonly rejection: RequirementRecord) {}
}

/**
 * Runs `body` for round 0, 1, 2, ... until a round ends with something other than a
 * {@link RetryRound}; each round is told the decision that rejected the one before it (null in round 0).
 */
export async function inRounds<T>(body: (round: number, rejection: RequirementRecord | null) => Promise<T | RetryRound>): Promise<T> {
  let rejection: RequirementRecord | null = null;
  for (let round = 0; ; round++) {
    const outcome = await body(round, rejection);
    if (!(outcome instanceof RetryRound)) return outcome;
    rejection = outcome.rejection;
  }
}

/** What a gate asks beyond its phase (the flags not given are false). */
export type GateFlags = Partial<Pick<GateRequest, 'requiresConfirmation' | 'requiresUserInput' | 'requiresOutputReview' | 'requiresRouteSelection' | 'stepOutput' | 'iteration'>>;

/** One gate of `node` at `path` in round `round`. */
export interface GateAsk {
  node: WorkflowNode;
  path: string;
  phase: GateRequest['phase'];
  round: number;
  flags: GateFlags;
  /** What an undecided gate does before the branch stops; default: mark the node run `awaiting_approval`. */
  onBlocked?: () => Promise<void>;
}

/**
 * Passes the gate (returns its decided requirement) or stops this branch with GateBlocked
 * (see passGate).
 */
export function gate(ctx: NodeContext, ask: GateAsk): Promise<RequirementRecord> {
  const { node, path, phase, round, flags } = ask;
  const request = {
    node,
    iterationPath: path,
    phase,
    round,
    requiresConfirmation: false,
    requiresUserInput: false,
    requiresOutputReview: false,
    requiresRouteSelection: false,
    ...flags,
  };
  return passGate(ctx.ledger, ctx.clock, request, ask.onBlocked ?? (() => ctx.ledger.awaiting(node, path)));
}

/** A decided gate: its decision and action; `ended` says how the round ends when the gate did not let it go on. */
export interface GateVerdict {
  decided: RequirementRecord;
  action: GateAction;
  /** Null when the round goes on; otherwise the node's result (skip) or another round (retry). */
  ended: NodeResult | RetryRound | null;
}

/**
 * Asks the gate of this round. `proceed` (and any action in `passing`) lets the round go on; any
 * other action ends it: skip settles the node as skipped, cancel stops the run (RunCancelled),
 * retry asks for another round unless `maxRetries` rounds were spent (then the node fails).
 */
export async function gateRound(ctx: NodeContext, ask: GateAsk, passing: readonly GateAction[] = []): Promise<GateVerdict> {
  const decided = await gate(ctx, ask);
  const action = actionOf(decided);
  if (action === 'proceed' || passing.includes(action)) return { decided, action, ended: null };
  return { decided, action, ended: await rejected(ctx, ask, decided, action) };
}

/** Applies a rejection (or a timeout) that does not proceed (see {@link gateRound}). */
async function rejected(ctx: NodeContext, ask: GateAsk, decided: RequirementRecord, action: Exclude<GateAction, 'proceed'>): Promise<NodeResult | RetryRound> {
  const { node, path, round } = ask;
  const reason = gateOutcomeText(decided);
  switch (action) {
    case 'retry':
      if (retryAllowed(decided, round)) return new RetryRound(decided);
      await settleNode(ctx, node, path, 'failed', `${reason} (after ${round + 1} rounds)`);
      throw new NodeFailedError(node.id, node.name, `${reason}; no retries left (maxRetries ${decided.maxRetries ?? 0})`);
    case 'cancel':
      await settleNode(ctx, node, path, 'cancelled', reason);
      throw new RunCancelled(`Run cancelled: ${reason}`);
    case 'skip':
    case 'else_branch':
      await settleNode(ctx, node, path, 'skipped', reason);
      return { output: null, skipped: true };
  }
}

/** Ends a node run that a gate stopped (it exists: every gate marks or starts it first). */
export async function settleNode(ctx: NodeContext, node: WorkflowNode, path: string, status: 'failed' | 'cancelled' | 'skipped', error: string): Promise<void> {
  await ctx.ledger.end(nodeRunOf(ctx, node, path), { status, error });
}

/** The node run of `node` at `path`, which must exist. */
export function nodeRunOf(ctx: NodeContext, node: WorkflowNode, path: string) {
  const nodeRun = ctx.ledger.existing(node.id, path);
  if (!nodeRun) throw new Error(`no node run for ${node.id}@${path}`);
  return nodeRun;
}
