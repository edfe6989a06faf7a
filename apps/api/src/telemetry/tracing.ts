/**
 * The OpenTelemetry SDK of the service (docs/operations/tracing.md): started by server.ts only
 * when an OTLP endpoint is configured (`config.tracing`), otherwise never loaded, so the runner's
 * `@opentelemetry/api` calls stay no-ops. It registers, process-wide, a NodeTracerProvider (context
 * in AsyncLocalStorage, so spans follow async calls), the W3C trace-context propagator (which the
 * trigger route reads `traceparent` with and the executors write it with), and exports spans in
 * batches over OTLP/HTTP (JSON). The SDK itself reads the standard `OTEL_*` variables: the endpoint,
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_RESOURCE_ATTRIBUTES`.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** What {@link startTracing} needs. */
export interface TracingOptions {
  /** `service.name` of every span (`OTEL_SERVICE_NAME`, default `switchyard-api`). */
  serviceName: string;
  /** Where spans go; default a BatchSpanProcessor on the OTLP/HTTP exporter configured by the `OTEL_*` variables (tests pass an in-memory one). */
  spanProcessor?: SpanProcessor;
}

/** The running SDK. */
export interface Tracing {
  /** Exports the spans still buffered, then unregisters the SDK (tracing is off again). Never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Registers the SDK process-wide (see the module comment) and returns its handle. Call once; a
 * second call replaces nothing (the API keeps the first registration) until the first is shut down.
 */
export function startTracing(options: TracingOptions): Tracing {
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [options.spanProcessor ?? new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    shutdown: async () => {
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
