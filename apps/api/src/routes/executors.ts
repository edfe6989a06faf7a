/**
 * GET /api/v1/executors (issue 9 item 6): the executor catalogue, what a canvas palette shows —
 * every registry key with its kind and description, MCP tools with their input schema, webhooks
 * with their method and origin, A2A agents with their card's name and skills. Built by `ExecutorRegistry.describe()`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, ExecutorListQuery, ExecutorListResponse } from '@switchyard/domain';
import type { AppServices } from '../services/index.ts';

const tags = ['executors'];

const executorRoutes: FastifyPluginAsyncTypebox<{ services: AppServices }> = async (app, { services }) => {
  app.get(
    '/executors',
    {
      schema: {
        tags,
        operationId: 'listExecutors',
        summary: 'List the executor catalogue',
        description:
          'Every key of the executor registry, sorted, with its kind and a description (the entry\'s `description`, else the MCP tool\'s, else a ' +
          'generated one). `mcp` keys carry their server and the tool\'s description and `inputSchema` from the server\'s `tools/list` (cached per ' +
          'connection, listed again after the server sends `notifications/tools/list_changed`; the first request may start the server). `http` keys ' +
          'carry the method and the URL\'s origin only; `builtin` keys the built-in they run; `a2a` keys the agent card\'s name, description, version ' +
          'and skills (the card is fetched from `<url>/.well-known/agent-card.json` and cached). A server or agent that cannot be reached (or an MCP ' +
          'server that lacks the tool) gives its keys `available: false` and an `error` (secrets redacted); the request still answers 200. ' +
          '`?kind=` lists one kind only.',
        querystring: ExecutorListQuery,
        response: { 200: ExecutorListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { kind } = request.query;
      return { executors: await services.executors.describe(kind === undefined ? {} : { kind }) };
    },
  );
};

export default executorRoutes;
