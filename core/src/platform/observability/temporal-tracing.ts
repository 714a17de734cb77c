import { createRequire } from 'node:module';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  type OpenTelemetrySinks,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { Tracing } from './tracing.js';

/**
 * Temporal's OpenTelemetry interceptors (`@temporalio/interceptors-opentelemetry`, the version of
 * the SDK): the client puts the caller's span into the workflow's start headers, the workflow
 * continues it (its spans leave the sandbox through a sink) and puts it into each activity's
 * headers, and the activity continues it. Loaded only when tracing is on.
 */

/** The workflow interceptors, bundled into the traced workflow bundle (worker.ts). */
export const workflowTracingModule = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/** The client's: starting a workflow is a span, and the workflow's parent. */
export function tracingClientInterceptors(tracing: Tracing): ClientInterceptors {
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] };
}

/** The worker's: activity spans, and the sink workflow spans are exported through. */
export function tracingWorkerOptions(tracing: Tracing): {
  interceptors: WorkerInterceptors;
  sinks: InjectedSinks<OpenTelemetrySinks>;
} {
  const { tracer } = tracing;
  return {
    interceptors: {
      activity: [
        (context) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(context, { tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(context),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
