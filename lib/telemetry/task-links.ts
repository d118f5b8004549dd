// How a video task's background work joins its trace (docs/observability.md): the create request's
// span context is stored with the task; a poll's upstream read is a span LINKED to it (a trace of its
// own), a callback delivery a CHILD of it (the receiver's work joins the create's trace).
import type { Upstream } from '../types.js';
import { ATTR, GET_TASK_OPERATION, SPAN_KIND, STATUS_ERROR } from './conventions.js';
import type { OtelApi, OtelSpan, OtelSpanContext } from './otel-api.js';
import { INVALID_TRACE_ID, clip, errorTypeOf, setAttributes } from './span-values.js';
import type { TelemetryScope } from './telemetry-scope.js';

/** A span context as a task record keeps it (plain JSON): the create request's, for polls and callbacks. */
export interface TaskTraceContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** The active span's context, to store with a task so its polls and callbacks find the create's trace. */
export function currentTaskTrace(api: OtelApi | undefined): TaskTraceContext | undefined {
  const context = api?.trace.getActiveSpan()?.spanContext();
  if (!context || context.traceId === INVALID_TRACE_ID) return undefined;
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags };
}

/** A task poll's upstream read: a CLIENT span in the current trace (or a new one), LINKED to the create's. */
export async function taskPollSpan<T>(scope: TelemetryScope, upstream: Upstream, model: string, created: TaskTraceContext | undefined, run: () => Promise<T>): Promise<T> {
  const name = clip(upstream.model ?? model);
  const { tracer } = scope;
  const span = scope.guard(() => tracer.startSpan(`${GET_TASK_OPERATION} ${name}`, { kind: SPAN_KIND.client, ...(created ? { links: [{ context: remote(created) }] } : {}) }), undefined);
  if (!span) return run();
  if (span.isRecording()) {
    setAttributes(span, {
      [ATTR.operationName]: GET_TASK_OPERATION,
      [ATTR.providerName]: scope.metrics.providerName(upstream.provider),
      [ATTR.requestModel]: name,
      [ATTR.serverAddress]: scope.hostOf(upstream.baseURL),
    });
  }
  return runSpan(scope, span, run);
}

/**
 * An image task's run on whichever instance takes it (docs/image-tasks.md): an INTERNAL span of a trace
 * of its own, LINKED to the create's; the upstream attempts it makes are its children.
 */
export async function taskRunSpan<T>(scope: TelemetryScope, model: string, created: TaskTraceContext | undefined, run: () => Promise<T>): Promise<T> {
  const span = scope.guard(() => scope.tracer.startSpan(`image task ${clip(model)}`, { kind: SPAN_KIND.internal, ...(created ? { links: [{ context: remote(created) }] } : {}) }), undefined);
  if (!span) return run();
  return runSpan(scope, span, run);
}

/**
 * One callback delivery: a CLIENT span, child of the create's span (so the receiver's work joins the
 * trace that created the task; `traceparent` goes out with the POST), and the delivery counter.
 */
export async function callbackDeliverySpan<T>(scope: TelemetryScope, created: TaskTraceContext | undefined, status: string | undefined, run: () => Promise<T>): Promise<T> {
  const { api, tracer } = scope;
  const parent = created ? api.trace.setSpanContext(api.context.active(), remote(created)) : api.context.active();
  const span = scope.guard(() => tracer.startSpan('POST callback', { kind: SPAN_KIND.client }, parent), undefined);
  if (!span) return run();
  if (span.isRecording() && status !== undefined) span.setAttribute(ATTR.taskStatus, status);
  try {
    const result = await runSpan(scope, span, run, parent);
    scope.guard(() => scope.metrics.recordCallbackDelivery('delivered'), undefined);
    return result;
  } catch (error) {
    scope.guard(() => scope.metrics.recordCallbackDelivery('failed'), undefined);
    throw error;
  }
}

async function runSpan<T>(scope: TelemetryScope, span: OtelSpan, run: () => Promise<T>, parent?: unknown): Promise<T> {
  const { api } = scope;
  try {
    return await api.context.with(api.trace.setSpan(parent ?? api.context.active(), span), run);
  } catch (error) {
    if (span.isRecording()) {
      const errorType = errorTypeOf(error);
      span.setAttribute(ATTR.errorType, errorType);
      span.setStatus({ code: STATUS_ERROR, message: errorType });
    }
    throw error;
  } finally {
    scope.guard(() => span.end(), undefined);
  }
}

function remote(context: TaskTraceContext): OtelSpanContext {
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags, isRemote: true };
}
