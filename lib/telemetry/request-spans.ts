// The server span of one gateway request and the request-duration and images metrics it ends with
// (docs/observability.md): named `METHOD /route`, a 4xx is the caller's mistake, a 5xx a failure.
import type { ProviderName, RouteName } from '../types.js';
import { ATTR, SPAN_KIND, STATUS_ERROR } from './conventions.js';
import type { Metrics } from './metrics.js';
import type { OtelSpan } from './otel-api.js';
import { INVALID_TRACE_ID, clip, defined, outcomeOf } from './span-values.js';
import type { TelemetryScope } from './telemetry-scope.js';

/** The server span of one gateway request and the context it is active in. */
export interface RequestTrace {
  readonly span: OtelSpan;
  /** Runs `fn` with the span active, so upstream attempts become its children. */
  run<T>(fn: () => T): T;
}

/** How a request ended, for its span and the request-duration metric. */
export interface RequestEnd {
  route: RouteName;
  status: number;
  errorCode?: string;
  model: string;
  provider?: ProviderName;
  images: number;
  /** The caller's id, when authenticated: whose label slots a new model name takes (metrics.ts). */
  tenant?: string;
  durationMs: number;
  idempotentReplay?: boolean;
}

/** Starts the server span; undefined when it neither records nor carries a trace. */
export function startRequestSpan(scope: TelemetryScope, route: RouteName, method: string, httpRoute: () => string): RequestTrace | undefined {
  const { api, tracer } = scope;
  const span = tracer.startSpan(route, { kind: SPAN_KIND.server });
  if (span.isRecording()) {
    const path = httpRoute();
    span.updateName(`${method} ${path}`);
    span.setAttribute(ATTR.httpMethod, method);
    span.setAttribute(ATTR.httpRoute, path);
    span.setAttribute(ATTR.route, route);
  } else if (span.spanContext().traceId === INVALID_TRACE_ID) {
    return undefined;
  }
  const context = api.trace.setSpan(api.context.active(), span);
  return { span, run: (fn) => api.context.with(context, fn) };
}

/** Ends the request: its span (when there is one) and the request-duration metric. */
export function endRequestSpan(metrics: Metrics, trace: RequestTrace | undefined, end: RequestEnd): void {
  const outcome = outcomeOf(end.status, end.errorCode);
  const provider = end.provider && metrics.providerName(end.provider);
  const instruments = metrics.instruments();
  if (instruments) {
    instruments.requestDuration.record(end.durationMs / 1000, defined({ [ATTR.route]: end.route, [ATTR.httpStatus]: end.status, [ATTR.outcome]: outcome, [ATTR.errorType]: end.errorCode }));
    if (end.images > 0) {
      instruments.images.add(end.images, defined({ [ATTR.route]: end.route, [ATTR.providerName]: provider, [ATTR.requestModel]: metrics.modelLabel(end.model, 'caller', end.tenant) }));
    }
  }
  if (!trace) return;
  const { span } = trace;
  if (span.isRecording()) {
    span.setAttribute(ATTR.httpStatus, end.status);
    span.setAttribute(ATTR.outcome, outcome);
    if (end.model) span.setAttribute(ATTR.requestModel, clip(end.model));
    if (provider) span.setAttribute(ATTR.providerName, provider);
    if (end.errorCode) span.setAttribute(ATTR.errorType, end.errorCode);
    if (end.idempotentReplay !== undefined) span.setAttribute(ATTR.idempotentReplay, end.idempotentReplay);
    // server spans: a 4xx is the caller's mistake, not a failure of the gateway
    if (outcome === 'server_error') span.setStatus({ code: STATUS_ERROR, ...(end.errorCode ? { message: end.errorCode } : {}) });
  }
  span.end();
}
