/**
 * Human requests (issue #8, the MCP bridge's `ask_human`): an agent executing a step asks a person a
 * question. POST /workflows/{id}/runs/{run_id}/human-requests raises it on the node run, GET
 * .../human-requests/{request_id} tells where it stands; a person answers it through /approve.
 */
import Type, { type Static } from 'typebox';
import { CLOSED, Timestamp, nullable } from './common.ts';
import { NODE_ID_PATTERN } from '../validation.ts';
import { ActorSchema } from '../access.ts';
import { GateApprovers } from './workflow.ts';

/** Most choices a request may offer. */
export const MAX_HUMAN_REQUEST_CHOICES = 50;
/** Longest wait for an answer a request may set: 7 days. */
export const MAX_HUMAN_REQUEST_TIMEOUT_SECONDS = 604_800;

/** Body of POST .../human-requests. */
export const HumanRequestBody = Type.Object(
  {
    nodeId: Type.String({ pattern: NODE_ID_PATTERN.source, description: "WorkflowNode.id of the node whose executor asks (from the run's definitionSnapshot)" }),
    iterationPath: Type.Optional(
      Type.String({ maxLength: 512, description: "Inside loops, the iteration path of the node run that asks ('3', '2/1'); default '' (outside loops)" }),
    ),
    prompt: Type.String({ minLength: 1, maxLength: 4000, description: 'The question, as the person sees it' }),
    context: Type.Optional(nullable(Type.String({ maxLength: 20_000, description: 'What the person needs to know to answer; shown after the prompt' }))),
    choices: Type.Optional(
      nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
          minItems: 1,
          maxItems: MAX_HUMAN_REQUEST_CHOICES,
          uniqueItems: true,
          description: 'The answers to pick from (the person picks one with route_select); without them the answer is free text',
        }),
      ),
    ),
    approvers: Type.Optional(nullable(GateApprovers)),
    timeoutSeconds: Type.Optional(
      nullable(
        Type.Integer({
          minimum: 1,
          maximum: MAX_HUMAN_REQUEST_TIMEOUT_SECONDS,
          description: 'The request expires this many seconds after it was made when nobody answered (status expired); default never',
        }),
      ),
    ),
  },
  CLOSED,
);
export type HumanRequestBody = Static<typeof HumanRequestBody>;

export const HUMAN_REQUEST_STATUSES = ['pending', 'answered', 'cancelled', 'expired'] as const;

/** A human request and where it stands (201 of the POST, 200 of the GET). */
export const HumanRequest = Type.Object({
  requestId: Type.String({ description: 'The request id; also the requirement\'s `stepId`: answer with POST .../approve `{"stepId": requestId, ...}`' }),
  runId: Type.String(),
  workflowId: Type.String(),
  nodeId: Type.String(),
  iterationPath: Type.String(),
  prompt: Type.String(),
  context: nullable(Type.String()),
  choices: nullable(Type.Array(Type.String())),
  status: Type.Enum([...HUMAN_REQUEST_STATUSES], {
    description: 'pending; answered (by a person: confirm, user_input, route_select or reject); expired (timeoutSeconds passed); cancelled (the run ended first)',
  }),
  decision: nullable(Type.Enum(['approved', 'blocked'], { description: 'approved: answered; blocked: rejected, expired or cancelled; null while pending' })),
  response: nullable(Type.String({ description: "The answer: the free text (userInput.response), the picked choice, or a rejection's feedback" })),
  answeredBy: nullable({ ...ActorSchema, description: 'Who answered: the authenticated caller of the /approve call; null unless a person answered' }),
  approvers: nullable(Type.Array(Type.String(), { description: 'Who alone may answer (the request\'s `approvers`); null: the workflow\'s operators' })),
  requestedAt: Timestamp,
  timeoutAt: nullable(Timestamp),
  decidedAt: nullable(Timestamp),
});
export type HumanRequest = Static<typeof HumanRequest>;
