/**
 * Who may decide a gate or answer a human request (issue #18 items 3–4; docs/guide/access-control.md):
 *
 * 1. A requirement that names `approvers` may be decided by them alone (403 `not_an_approver`);
 *    being named is the right to decide (the route still needs the viewer role).
 * 2. Without approvers, the workflow's operators (and editors, owners, admins) decide (403
 *    `permission_denied`, `requiredRole: operator`).
 * 3. `allowSelfApproval: false` (four-eyes): the identity that triggered the run — or the retry,
 *    replay or rerun that made it, or any run it was made from with the same input (its
 *    `triggerLineage`) — may not decide (403 `self_approval_forbidden`), whatever 1–2 say.
 *
 * Without authentication (`SWITCHYARD_AUTH=none`) every caller may decide everything. Timeouts
 * decide by policy and never pass here.
 */
import {
  AccessDeniedError,
  NotAnApproverError,
  SelfApprovalForbiddenError,
  listMatches,
  roleIncludes,
  type Actor,
  type RequirementRecord,
  type Role,
  type RunRecord,
  type SwitchyardError,
} from '@switchyard/domain';
import { callerActor, principalsOf, type CallerIdentity } from '../auth/identity.ts';

/** A caller about to decide: who it is, its principals, and its role on the run's workflow. */
export interface Decider {
  actor: Actor;
  principals: string[];
  /** True without authentication: every right. */
  unrestricted: boolean;
  /** Its role on the workflow (admins: owner); null for none. */
  role: Role | null;
}

/** The {@link Decider} of a request's caller holding `role` on the workflow. */
export function deciderOf(identity: CallerIdentity, role: Role | null): Decider {
  return { actor: callerActor(identity), principals: principalsOf(identity), unrestricted: identity.unrestricted, role };
}

/**
 * Why `decider` may not decide `requirement` of `run` (the 403 to throw), or null when it may.
 * Pure: the inbox (`?mine=true`, `canDecide`) and /approve share it.
 */
export function decisionRefusal(
  decider: Decider,
  run: Pick<RunRecord, 'workflowDefinitionId' | 'triggeringUserId' | 'triggerLineage'>,
  requirement: Pick<RequirementRecord, 'stepId' | 'approvers' | 'allowSelfApproval'>,
): SwitchyardError | null {
  if (decider.unrestricted) return null;
  const approvers = requirement.approvers ?? null;
  if (approvers !== null && approvers.length > 0) {
    if (!listMatches(approvers, decider.principals)) return new NotAnApproverError(requirement.stepId, approvers);
  } else if (!roleIncludes(decider.role, 'operator')) {
    return new AccessDeniedError('operator', run.workflowDefinitionId);
  }
  if (requirement.allowSelfApproval === false && isTriggerOf(run, decider.actor.userId)) return new SelfApprovalForbiddenError(requirement.stepId);
  return null;
}

/**
 * True when `userId` triggered the run, or a run it was made from with the same input (its
 * `triggerLineage`: a retry, rerun or replay made by someone else does not let the first trigger
 * decide its own input). False for an unknown id.
 */
export function isTriggerOf(run: Pick<RunRecord, 'triggeringUserId' | 'triggerLineage'>, userId: string | null): boolean {
  if (userId === null) return false;
  return run.triggeringUserId === userId || (run.triggerLineage ?? []).includes(userId);
}
