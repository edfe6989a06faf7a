/**
 * Request logging at one line per request at `info` (issue #10 item 3): Fastify's default logs
 * two (`incoming request` when it arrives, `request completed` when answered). Here the arrival
 * is logged at `debug` only, and the answer's line carries the request too (method, URL, host,
 * client address: the serializer of logger.ts), its status and `responseTime` (milliseconds).
 * A failed answer is logged at `error` instead (`request errored`), as Fastify does.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/** The app's `logController` (app.ts): see the module comment. */
export class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
