/**
 * Server-Sent Events support (`{ sse: true }` routes, `reply.sse`) from `@fastify/sse` 0.4, the
 * last line whose `engines` allow Node 20.19 (0.5+ need 20.20.2). Its CommonJS entry exports the
 * plugin itself, while its type declarations describe an ES default export, which TypeScript's
 * NodeNext resolution reads as the namespace: the cast below states what the module really is.
 */
import type { FastifyPluginAsync } from 'fastify';
import sseModule from '@fastify/sse';
import type { SSEPluginOptions } from '@fastify/sse';

/** The @fastify/sse plugin. */
export const ssePlugin = sseModule as unknown as FastifyPluginAsync<SSEPluginOptions>;
