/**
 * GET /api/v1/executors (issue 9 item 6): the executor catalogue, what a canvas palette shows —
 * every registry key with its kind and description, MCP tools with their input schema, webhooks
 * with their method, A2A agents with their card's name and skills. Built by `ExecutorRegistry.describe()`,
 * shown as {@link publicView} says: no network location of a target and no absolute data path
 * (issue #16 item 9), since every reader of the API sees it.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ErrorBody, ExecutorListQuery, ExecutorListResponse } from '@switchyard/domain';
import type { ExecutorDescription } from '@switchyard/runner';
import type { AppServices } from '../services/index.ts';

/**
 * What readers see of one executor: without the webhook's `origin` and the agent's base `url`, with
 * `description` and `error` passed through `publicText` (addresses become `[address]`, the data
 * directory `$DATA_DIR`).
 */
export function publicView(description: ExecutorDescription, publicText: (text: string) => string = (text) => text): ExecutorDescription {
  const { origin: _origin, agent, ...rest } = description as ExecutorDescription & { origin?: string };
  const view: ExecutorDescription = { ...rest, description: publicText(rest.description) };
  if (rest.error !== undefined) view.error = publicText(rest.error);
  if (agent !== undefined) {
    const { url: _url, ...card } = agent as typeof agent & { url?: string };
    view.agent = card as typeof agent;
  }
  return view;
}

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
          'carry the method only (no URL: network locations are not shown); `builtin` keys the built-in they run; `a2a` keys the agent card\'s name, description, version ' +
          'and skills (the card is fetched from `<url>/.well-known/agent-card.json` and cached). A server or agent that cannot be reached (or an MCP ' +
          'server that lacks the tool) gives its keys `available: false` and an `error` (secrets redacted); the request still answers 200. ' +
          '`?kind=` lists one kind only.',
        querystring: ExecutorListQuery,
        response: { 200: ExecutorListResponse, 400: ErrorBody },
      },
    },
    async (request) => {
      const { kind } = request.query;
      const executors = await services.executors.describe(kind === undefined ? {} : { kind });
      return { executors: executors.map((executor) => publicView(executor, services.publicText)) };
    },
  );
};

export default executorRoutes;
