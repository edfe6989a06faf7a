/**
 * POST /workflows/{id}/runs/{run_id}/approve (spec endpoint 10, "Resolve HITL Requirement").
 */
import Type, { type Static } from 'typebox';
import { CLOSED, JsonObject, JsonValue } from './common.ts';
import { RunStatusSchema } from './run.ts';

export const RESOLUTIONS = ['confirm', 'reject', 'edit', 'user_input', 'route_select'] as const;

/** The 5-way decision on one pending requirement. */
export const ApproveBody = Type.Object(
  {
    stepId: Type.String({ minLength: 1, description: 'pendingRequirements[].stepId from the run detail' }),
    resolution: Type.Enum([...RESOLUTIONS]),
    feedback: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
    editedOutput: Type.Optional(JsonValue),
    userInput: Type.Optional(Type.Union([JsonObject, Type.Null()])),
    selectedChoices: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  },
  CLOSED,
);
export type ApproveBody = Static<typeof ApproveBody>;

/** 200 response: the decision is stored; the run continues by itself. */
export const ApproveResponse = Type.Object({
  runId: Type.String(),
  status: RunStatusSchema,
  resolvedStepId: Type.String(),
  message: Type.String(),
});
export type ApproveResponse = Static<typeof ApproveResponse>;
