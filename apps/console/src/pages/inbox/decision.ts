/**
 * Sending a decision on a gate (POST …/runs/{run_id}/approve) and finding out, after a 409, who
 * decided it first (the run detail's `requirements`).
 */
import { useState } from 'preact/hooks';
import { API, ApiError, api, runPath } from '../../api.ts';
import type { ApprovalRow, DecidedRequirement, DecisionBody } from './types.ts';
import { approversText } from './types.ts';

/** Where a card's decision stands. */
export type DecisionState = { kind: 'idle' } | { kind: 'busy' } | { kind: 'error'; error: unknown };

/** What the inbox page does with a card's outcome. */
export interface DecisionCallbacks {
  /** The decision was recorded (200). */
  onDecided: (row: ApprovalRow, body: DecisionBody) => void;
  /** Someone (or a timeout) decided first (409): `decided` is the gate as the run records it, null when it cannot be read. */
  onConflict: (row: ApprovalRow, decided: DecidedRequirement | null) => void;
}

/** The gate `stepId` of run `runId` as the run detail records it (null when unreadable or absent). */
export async function loadDecided(runId: string, stepId: string): Promise<DecidedRequirement | null> {
  try {
    const run = await api<{ requirements?: DecidedRequirement[] }>('GET', `${API}/runs/${encodeURIComponent(runId)}`);
    return run.requirements?.find((requirement) => requirement.stepId === stepId) ?? null;
  } catch {
    return null;
  }
}

/**
 * A card's decision: `submit(body)` sends it (the row's stepId is filled in); a 200 calls
 * `onDecided`, a 409 loads who decided and calls `onConflict`, anything else is kept as the error.
 */
export function useDecision(row: ApprovalRow, callbacks: DecisionCallbacks): { state: DecisionState; submit: (body: Omit<DecisionBody, 'stepId'>) => Promise<void> } {
  const [state, setState] = useState<DecisionState>({ kind: 'idle' });
  const submit = async (partial: Omit<DecisionBody, 'stepId'>) => {
    const body: DecisionBody = { stepId: row.requirement.stepId, ...partial };
    setState({ kind: 'busy' });
    try {
      await api('POST', runPath(row.workflowId, row.runId, '/approve'), body);
      setState({ kind: 'idle' });
      callbacks.onDecided(row, body);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && error.detail.error === 'conflict') {
        const decided = await loadDecided(row.runId, row.requirement.stepId);
        setState({ kind: 'idle' });
        callbacks.onConflict(row, decided);
      } else {
        setState({ kind: 'error', error });
      }
    }
  };
  return { state, submit };
}

/** Why the API refused a decision with 403, in words; null for another error. */
export function forbiddenReason(error: unknown, row: ApprovalRow): string | null {
  if (!(error instanceof ApiError) || error.status !== 403) return null;
  const code = error.detail.error;
  if (code === 'not_an_approver') {
    const named = error.detail.details?.approvers;
    const who = Array.isArray(named) && named.length > 0 ? named.join(', ') : approversText(row);
    return who ? `Only ${who} may decide this.` : 'You are not among the approvers of this gate.';
  }
  if (code === 'self_approval_forbidden') return 'You triggered this run: someone else must decide.';
  return `You may not decide this: ${error.detail.message}`;
}
