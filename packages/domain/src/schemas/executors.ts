/**
 * GET /api/v1/executors: the executor catalogue, what a canvas palette shows (issue 9 item 6).
 * Built by the runner's `ExecutorRegistry.describe()`.
 */
import Type, { type Static } from 'typebox';

/** Query of GET /api/v1/executors. */
export const ExecutorListQuery = Type.Object({
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only executors of this kind (builtin, mcp, http, a2a); an unknown kind lists none' })),
});
export type ExecutorListQuery = Static<typeof ExecutorListQuery>;

/** One registry key of the catalogue. */
export const ExecutorDescriptionSchema = Type.Object(
  {
    key: Type.String({ description: 'The registry key, as a step names it in executorKey' }),
    kind: Type.String({ description: 'builtin, mcp, http or a2a' }),
    description: Type.String({ description: "The entry's description; else the MCP tool's own or the A2A agent card's; else one generated from the entry" }),
    available: Type.Boolean({
      description: 'False when the key cannot run now: its MCP server does not start or answer, or lacks the tool; its A2A agent card cannot be fetched',
    }),
    error: Type.Optional(Type.String({ description: 'Why available is false (secrets redacted)' })),
    builtin: Type.Optional(Type.String({ description: 'builtin: the built-in the key runs (echo, fail, sleep)' })),
    server: Type.Optional(Type.String({ description: 'mcp: the server name (a key of mcpServers)' })),
    tool: Type.Optional(
      Type.Object(
        {
          name: Type.String(),
          description: Type.Optional(Type.String({ description: "The tool's description, as the server lists it" })),
          inputSchema: Type.Optional(Type.Object({}, { additionalProperties: true, description: "The tool's input JSON Schema, as the server lists it: what the step config must be" })),
        },
        { description: 'mcp: the tool (description and inputSchema absent when the server could not be asked)' },
      ),
    ),
    method: Type.Optional(Type.String({ description: 'http: the method' })),
    agent: Type.Optional(
      Type.Object(
        {
          name: Type.String({ description: "The card's name" }),
          description: Type.String({ description: "The card's description" }),
          version: Type.Optional(Type.String({ description: "The card's version" })),
          skills: Type.Array(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              description: Type.String(),
              tags: Type.Optional(Type.Array(Type.String())),
            }),
            { description: "The card's skills" },
          ),
        },
        { description: 'a2a: what the agent card says (absent when it could not be fetched)' },
      ),
    ),
  },
);
export type ExecutorDescriptionSchema = Static<typeof ExecutorDescriptionSchema>;

/** 200 response of GET /api/v1/executors, sorted by key. */
export const ExecutorListResponse = Type.Object({ executors: Type.Array(ExecutorDescriptionSchema) });
export type ExecutorListResponse = Static<typeof ExecutorListResponse>;
