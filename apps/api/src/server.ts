/**
 * The service entry point (`npm start`): configuration from the environment, pino logging (with
 * redaction, see logger.ts),
 * services, listen, graceful shutdown on SIGINT/SIGTERM (shutdown.ts: executing nodes may finish
 * within `SWITCHYARD_SHUTDOWN_GRACE_MS`, then runs in flight release their leases and continue on
 * the next start or another instance at once).
 */
import { buildApp } from './app.ts';
import { assertSafeBinding, loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { openServices } from './services/index.ts';
import { gracefulShutdown } from './shutdown.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  assertSafeBinding(config);
  // Redacts credentials and never logs headers or bodies (see logger.ts).
  const logger = createLogger(config.logLevel);
  // OpenTelemetry tracing, only when an OTLP endpoint is set (telemetry/tracing.ts; loaded only then).
  const tracing = config.tracing === null ? null : (await import('./telemetry/tracing.ts')).startTracing(config.tracing);
  const services = await openServices(config, logger);
  const app = await buildApp({
    services,
    logger,
    authenticator: services.authenticator,
    corsOrigins: config.corsOrigins,
    rateLimits: { triggers: config.rateLimitTriggersPerMinute, approvals: config.rateLimitApprovalsPerMinute, definitions: config.rateLimitDefinitionsPerMinute },
    edge: config.edge,
    yamlParser: { threads: config.yamlParserThreads },
  });
  // Stop claiming, end event streams, let executing nodes finish within the grace, release every lease,
  // export the spans still buffered, exit (shutdown.ts).
  const shutdown = gracefulShutdown({ app, services, logger, graceMs: config.shutdownGraceMs, tracing });
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  logger.info(
    {
      executors: services.executors.keys(),
      executorsFile: config.executorsFile,
      docs: `/docs`,
      corsOrigins: config.corsOrigins,
      tracing: config.tracing === null ? 'off' : 'otlp',
      allowedHosts: config.edge.allowedHosts.length > 0 ? config.edge.allowedHosts : 'loopback only without authentication, else any',
      auth: { modes: config.auth.modes.length > 0 ? config.auth.modes : 'none', trustProxyIdentity: config.auth.trustProxyIdentity },
      downstreamTokens: config.downstreamToken === null ? 'off' : { fallbackAudience: config.downstreamToken.audience, ttlSeconds: config.downstreamToken.ttlSeconds },
      rateLimitsPerMinute: {
        triggers: config.rateLimitTriggersPerMinute || 'off',
        approvals: config.rateLimitApprovalsPerMinute || 'off',
        definitions: config.rateLimitDefinitionsPerMinute || 'off',
      },
    },
    'switchyard api ready',
  );
}

main().catch((error: unknown) => {
  // The logger may not exist yet (bad configuration): report on stderr and exit non-zero.
  console.error('switchyard api failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
