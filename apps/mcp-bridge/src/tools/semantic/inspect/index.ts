/** Tools of the semantic surface: the inspect group (one tool per file). */
import type { AnyTool } from '../../../tool.ts';
import { explainRun } from './explain-run.ts';
import { getNodeDetail } from './get-node-detail.ts';
import { getRunEvents } from './get-run-events.ts';
import { getTimeline } from './get-timeline.ts';
import { listArtifacts } from './list-artifacts.ts';
import { watchRunTool } from './watch-run.ts';

export const INSPECT_TOOLS: readonly AnyTool[] = [watchRunTool, explainRun, getNodeDetail, listArtifacts, getRunEvents, getTimeline];
