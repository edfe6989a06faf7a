/** Tools of the semantic surface: the control group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';
import { cancelRun } from './cancel-run.ts';
import { listPendingApprovals } from './list-pending-approvals.ts';
import { pauseRun } from './pause-run.ts';
import { replayRun } from './replay-run.ts';
import { rerunNode } from './rerun-node.ts';
import { resolveApproval } from './resolve-approval.ts';
import { resumeRun } from './resume-run.ts';
import { retryRun } from './retry-run.ts';

export const CONTROL_TOOLS: readonly AnyTool[] = [listPendingApprovals, resolveApproval, pauseRun, resumeRun, cancelRun, retryRun, rerunNode, replayRun];
