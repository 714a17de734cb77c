import { context, diag, DiagLogLevel, propagation, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { TrellisConfig } from '../config/types.js';
import type { Logger } from '../logging.js';

/**
 * OpenTelemetry traces (README, "Operating Trellis"), on only when `Telemetry.OtlpEndpoint` is
 * set. One trace follows a run: the API request (continuing an incoming `traceparent`), the start
 * of its Temporal workflow, the workflow, each activity, each plugin call, and on from there in
 * the `traceparent` a network plugin sends.
 *
 * The OpenTelemetry SDK is the 1.x line because `@temporalio/interceptors-opentelemetry` 1.24 is
 * built on it: workflow spans reach the exporter as 1.x spans (`parentSpanId`), which a 2.x
 * exporter would send without their parent.
 *
 * With tracing off nothing here runs: no provider, no context manager (whose AsyncLocalStorage
 * would tax every promise of the process), no interceptors.
 */
export interface Tracing {
  tracer: Tracer;
  /** Where spans end; workflow spans leave the workflow sandbox into it (a Temporal sink). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is still buffered and stops. */
  shutdown(): Promise<void>;
}

/** The name spans of Trellis's own code are recorded under. */
const instrumentationName = 'trellis';

/** Spans go to the collector's `/v1/traces` (the endpoint as OTLP's exporters take it). */
export function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}

/** Starts tracing when `Telemetry.OtlpEndpoint` is set; undefined (nothing at all) otherwise. */
export function startTracing(
  telemetry: TrellisConfig['Telemetry'],
  details: { role: string; version: string; logger: Logger },
): Tracing | undefined {
  if (!telemetry.OtlpEndpoint) return undefined;
  const logger = details.logger.child({ component: 'opentelemetry' });
  const resource = Resource.default().merge(
    new Resource({
      'service.name': telemetry.ServiceName,
      'service.version': details.version,
      'trellis.role': details.role,
    }),
  );
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: tracesUrl(telemetry.OtlpEndpoint) }),
  );
  const provider = new BasicTracerProvider({
    resource,
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(telemetry.SampleRatio),
    }),
  });
  provider.addSpanProcessor(spanProcessor);

  // Context and propagation are process-wide in OpenTelemetry's API. A second tracing Trellis in
  // the same process (tests) shares the first one's, which work the same.
  const ownContext = context.setGlobalContextManager(
    new AsyncLocalStorageContextManager().enable(),
  );
  const ownPropagation = propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const ownDiag = diag.setLogger(
    {
      error: (message, ...args) => logger.warn({ args }, message),
      warn: (message, ...args) => logger.warn({ args }, message),
      info: (message, ...args) => logger.debug({ args }, message),
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  logger.info({ endpoint: tracesUrl(telemetry.OtlpEndpoint) }, 'tracing to OTLP');
  return {
    tracer: provider.getTracer(instrumentationName, details.version),
    spanProcessor,
    resource,
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        if (ownContext) context.disable();
        if (ownPropagation) propagation.disable();
        if (ownDiag) diag.disable();
      }
    },
  };
}
