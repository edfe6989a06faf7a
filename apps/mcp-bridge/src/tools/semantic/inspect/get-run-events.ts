import * as z from 'zod/v4';
import { ApiError } from '../../../api-client.ts';
import { ToolError } from '../../../envelope.ts';
import { defineTool } from '../../../tool.ts';
import { getRun, id } from '../../shared.ts';
import { eventPage } from './reads.ts';

/** A run event as tools show it. */
export const RunEventSchema = z.object({
  seq: z.number().int(),
  type: z.string(),
  timestamp: z.string(),
  nodeId: z.string().optional(),
  payload: z.record(z.string(), z.unknown()),
});

export const getRunEvents = defineTool({
  name: 'get_run_events',
  title: 'Get run events',
  description:
    "Returns a run's event log in seq order (1, 2, 3, ...): run.started/resumed/awaiting_approval/paused/completed/failed/cancelled, " +
    'directive.received, node.started/completed/failed/retrying/skipped/cancelled/awaiting_approval (with attempt, error, delayMs), ' +
    'requirement.raised/decided. Filter with `types` (e.g. ["node.failed","node.retrying"]) and `nodeId`; page with `afterSeq` = the ' +
    'returned `nextAfterSeq` while `hasMore` is true (`limit` 1-1000, default 100). Use it for the exact history; explain_run and ' +
    'get_node_detail summarize it.',
  kind: 'read',
  input: z.object({
    runId: id('Run id'),
    afterSeq: z.number().int().min(0).optional().describe('Only events after this seq (default 0)'),
    types: z
      .array(z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'an event type such as node.failed'))
      .max(20)
      .optional()
      .describe('Only these event types'),
    nodeId: z.string().min(1).optional().describe('Only events about this node'),
    limit: z.number().int().min(1).max(1000).optional().describe('Events to return (default 100)'),
  }),
  output: z.object({
    runId: z.string(),
    events: z.array(RunEventSchema),
    nextAfterSeq: z.number().int().describe('Pass as afterSeq to get the next page'),
    hasMore: z.boolean().describe('True when the page is full: more events may follow'),
  }),
  async run(args, { api }) {
    const run = await getRun(api, args.runId);
    const limit = args.limit ?? 100;
    let events;
    try {
      events = await eventPage(api, run, { afterSeq: args.afterSeq, limit, types: args.types?.join(','), nodeId: args.nodeId });
    } catch (error) {
      // Every other argument is checked here: a 400 can only be about the event types.
      if (error instanceof ApiError && error.status === 400 && args.types) throw new ToolError('INVALID_INPUT', `types: ${error.message}`, { fields: ['types'] });
      throw error;
    }
    return { runId: run.id, events, nextAfterSeq: events.at(-1)?.seq ?? args.afterSeq ?? 0, hasMore: events.length === limit };
  },
});
