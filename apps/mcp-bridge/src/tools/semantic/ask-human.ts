import * as z from 'zod/v4';
import { ToolError } from '../../envelope.ts';
import { defineTool } from '../../tool.ts';
import { callerStep } from '../run-context.ts';
import { getRun, runPath } from '../shared.ts';

/** A human request as the API shows it. */
interface HumanRequest {
  requestId: string;
  runId: string;
  nodeId: string;
  iterationPath: string;
  status: 'pending' | 'answered' | 'cancelled' | 'expired';
  decision: 'approved' | 'blocked' | null;
  response: unknown;
  /** Who answered (issue #18): `{ userId, username, via }`. */
  answeredBy: AnsweringActor | null;
}

/** The actor the API records for an answer. */
interface AnsweringActor {
  userId: string | null;
  username: string | null;
  via: string;
}

export const askHuman = defineTool({
  name: 'ask_human',
  title: 'Ask a human',
  description:
    'For an agent working inside a Switchyard run step: asks a person a question and waits for the answer, instead of guessing ' +
    'when blocked, unsure, missing information, or about to do something irreversible. The question appears in the approvals inbox ' +
    '(list_pending_approvals); a person answers it there or with resolve_approval. Returns `status` answered | cancelled | expired | ' +
    'aborted, `decision` approved | blocked ("blocked" means: do not proceed) and the `response`. The run and node come from ' +
    '`runId`/`nodeId` or, when Switchyard calls this tool as a step executor, from the call itself.',
  kind: 'write',
  input: z.object({
    prompt: z.string().min(1).max(4000).describe('The question or decision to put to a person'),
    context: z.string().max(20_000).optional().describe('Extra context shown with the prompt'),
    choices: z.array(z.string().min(1)).min(1).max(50).optional().describe('Fixed answers; the person picks one'),
    approvers: z
      .array(z.string().min(1).max(206))
      .min(1)
      .max(100)
      .optional()
      .describe("Who alone may answer: principals `user:<id>`, `group:<name>` or `*`; default the workflow's operators"),
    runId: z.string().regex(/^[0-9a-f]{24}$/i).optional().describe('Run to attach to (default: the calling step\'s run)'),
    nodeId: z.string().min(1).optional().describe('Node to attach to (default: the calling step)'),
    iteration: z.string().optional().describe("Iteration path inside loops, e.g. '2' (default: the calling step's, else '')"),
    timeoutSeconds: z.number().int().min(1).max(604_800).optional().describe('The request expires after this long (default: never)'),
    pollSeconds: z.number().min(0.2).max(60).optional().describe('How often to check for the answer (default 3)'),
  }),
  output: z.object({
    requestId: z.string(),
    runId: z.string(),
    nodeId: z.string(),
    iteration: z.string(),
    status: z.enum(['answered', 'cancelled', 'expired', 'aborted']),
    decision: z.enum(['approved', 'blocked']),
    response: z.unknown(),
    answeredBy: z.string().nullable().describe("Who answered, by name (spec mcp-semantic-tools.md): the person's display name, else their user id"),
    answeredByUser: z
      .object({ userId: z.string().nullable(), username: z.string().nullable(), via: z.string() })
      .nullable()
      .describe('Who answered, with the stable user id (issue #18)'),
  }),
  async run(args, context) {
    const caller = callerStep(context.meta);
    const runId = args.runId ?? caller.runId;
    const nodeId = args.nodeId ?? caller.nodeId;
    if (!runId || !nodeId) {
      throw new ToolError('INVALID_INPUT', 'runId and nodeId are needed: pass them, or call this tool from a Switchyard step', {
        fields: [...(runId ? [] : ['runId']), ...(nodeId ? [] : ['nodeId'])],
      });
    }
    const iterationPath = args.iteration ?? (args.nodeId === undefined ? caller.iterationPath : undefined) ?? '';
    const run = await getRun(context.api, runId);
    const base = runPath(run.workflowDefinitionId, runId, '/human-requests');
    const created = await context.api.post<HumanRequest>(base, {
      nodeId,
      iterationPath,
      prompt: args.prompt,
      ...(args.context === undefined ? {} : { context: args.context }),
      ...(args.choices === undefined ? {} : { choices: args.choices }),
      ...(args.approvers === undefined ? {} : { approvers: args.approvers }),
      ...(args.timeoutSeconds === undefined ? {} : { timeoutSeconds: args.timeoutSeconds }),
    });
    const path = `${base}/${encodeURIComponent(created.requestId)}`;
    const pollMs = Math.round((args.pollSeconds ?? 3) * 1000);
    let current = created;
    while (current.status === 'pending') {
      try {
        await context.sleep(pollMs, context.signal);
      } catch {
        // The caller gave up (its call was cancelled): the request stays in the inbox.
        return { requestId: created.requestId, runId, nodeId, iteration: iterationPath, status: 'aborted' as const, decision: 'blocked' as const, response: null, answeredBy: null, answeredByUser: null };
      }
      current = await context.api.get<HumanRequest>(path);
    }
    return {
      requestId: current.requestId,
      runId,
      nodeId,
      iteration: current.iterationPath,
      status: current.status,
      decision: current.decision ?? 'blocked',
      response: current.response ?? null,
      answeredBy: current.answeredBy === null ? null : (current.answeredBy.username ?? current.answeredBy.userId),
      answeredByUser: current.answeredBy,
    };
  },
});
