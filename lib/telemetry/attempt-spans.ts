// One upstream attempt (docs/observability.md): a CLIENT span after the GenAI client conventions,
// child of the active span, and one `gen_ai.client.operation.duration` measurement. When nothing
// observes it, the call's own promise is returned and nothing is built for it.
import { rejectionOf } from '../errors/rejection-of.js';
import type { RouteName, Upstream } from '../types.js';
import { ATTR, OPERATIONS, SPAN_KIND, STATUS_ERROR } from './conventions.js';
import type { OtelSpan } from './otel-api.js';
import { INVALID_TRACE_ID, clip, defined, errorTypeOf, setAttributes } from './span-values.js';
import type { TelemetryScope } from './telemetry-scope.js';

/** Longest opted-in prompt on a span, whichever route built it: an attribute is for reading, not for storing requests. */
const MAX_PROMPT_CHARS = 8192;

/** What an upstream attempt is for, as the GenAI conventions describe it. */
export interface AttemptInfo<T = unknown> {
  route: RouteName;
  /** The model the caller named (the upstream's own `model` wins when the resolver set one). */
  model: string;
  /** The `n` asked for, when the request has one. */
  choices?: number;
  /** The caller's id: a model name admitted as a metric label takes one of this tenant's slots (metrics.ts). */
  tenant?: string;
  /** The id of the request the attempt serves, for the log line of a failed attempt (absent for background work). */
  requestId?: string;
  /**
   * The request the attempt serves, in place of `requestId`: its id is read (or made, requestIdOf)
   * only for a failed attempt's log line, never for the attempts that succeed.
   */
  request?: object;
  /** The prompt text, read only when the host opted in to prompt capture and the span records. */
  prompt?: () => string | undefined;
  /** What the upstream answered (response model, token usage), read only when the span records. */
  response?: (result: T) => AttemptResponse | undefined;
  /** How routing chose this upstream, and the upstreams it skipped as open (docs/routing-and-health.md), set by the fallback rule. */
  routing?: { selectedBy: string; skipped: readonly string[] };
}

export interface AttemptResponse {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
}

/**
 * Not async itself: when nothing records (no SDK: a non-recording span outside any trace, no meter
 * provider) the call's own promise is returned, so no suspended frame waits beside each slow
 * upstream call (memory per held request).
 */
export function attemptSpan<T>(scope: TelemetryScope, upstream: Upstream, index: number, info: AttemptInfo<T> | undefined, run: () => Promise<T>): Promise<T> {
  const operation = info ? OPERATIONS[info.route] : undefined;
  const model = clip(upstream.model ?? info?.model);
  const { tracer } = scope;
  const span = scope.guard(() => tracer.startSpan(`${operation?.operation ?? 'call'}${model ? ` ${model}` : ''}`, { kind: SPAN_KIND.client }), undefined);
  if (!span) return rejectionOf(run);
  if (!span.isRecording() && span.spanContext().traceId === INVALID_TRACE_ID && !scope.guard(() => scope.metrics.instruments(), undefined)) {
    // nothing observes this span or its duration: ended now, as it would be later, with nothing recorded
    scope.guard(() => span.end(), undefined);
    return rejectionOf(run);
  }
  return attemptObserved(scope, span, upstream, index, info, run, { operation, model });
}

async function attemptObserved<T>(
  scope: TelemetryScope,
  span: OtelSpan,
  upstream: Upstream,
  index: number,
  info: AttemptInfo<T> | undefined,
  run: () => Promise<T>,
  named: { operation: (typeof OPERATIONS)[RouteName] | undefined; model: string | undefined },
): Promise<T> {
  const { api, metrics } = scope;
  const { operation, model } = named;
  const recording = span.isRecording();
  if (recording) {
    setAttributes(span, {
      [ATTR.operationName]: operation?.operation,
      [ATTR.providerName]: metrics.providerName(upstream.provider),
      [ATTR.requestModel]: model,
      [ATTR.outputType]: operation?.output,
      [ATTR.choiceCount]: info?.choices !== undefined && info.choices !== 1 ? info.choices : undefined,
      [ATTR.serverAddress]: scope.hostOf(upstream.baseURL),
      [ATTR.attempt]: index + 1,
      [ATTR.selectedBy]: info?.routing?.selectedBy,
    });
    if (info?.routing && info.routing.skipped.length > 0) span.setAttribute(ATTR.skipped, info.routing.skipped.join(', '));
    if (scope.capturePrompts && info?.prompt) {
      const prompt = info.prompt();
      if (prompt) span.setAttribute(ATTR.inputMessages, prompt.slice(0, MAX_PROMPT_CHARS));
    }
  }
  const started = performance.now();
  let errorType: string | undefined;
  let answered = false;
  try {
    const result = recording || span.spanContext().traceId !== INVALID_TRACE_ID ? await api.context.with(api.trace.setSpan(api.context.active(), span), run) : await run();
    answered = true;
    if (recording && info?.response) {
      const answer = info.response(result);
      if (answer) setAttributes(span, { [ATTR.responseModel]: clip(answer.model), [ATTR.inputTokens]: answer.inputTokens, [ATTR.outputTokens]: answer.outputTokens });
    }
    return result;
  } catch (error) {
    errorType = errorTypeOf(error);
    if (recording) {
      span.setAttribute(ATTR.errorType, errorType);
      span.setStatus({ code: STATUS_ERROR, message: errorType });
    }
    throw error;
  } finally {
    scope.guard(() => span.end(), undefined);
    scope.guard(
      () =>
        metrics.instruments()?.upstreamDuration.record(
          (performance.now() - started) / 1000,
          defined({
            [ATTR.operationName]: operation?.operation,
            [ATTR.providerName]: metrics.providerName(upstream.provider),
            // the operator's model (the resolver named it) or one the upstream answered for; never a name
            // only a caller vouches for (a failed pass-through of an invented model)
            // a name the caller did not send: a resolver that passes the caller's name on
            // (`{ ...upstream, model }`) routes caller text, which takes that tenant's slots
            [ATTR.requestModel]: metrics.modelLabel(model, upstream.model !== undefined && upstream.model !== info?.model ? 'routed' : answered ? 'caller' : false, info?.tenant),
            [ATTR.serverAddress]: scope.hostOf(upstream.baseURL),
            [ATTR.errorType]: errorType,
          }),
        ),
      undefined,
    );
  }
}
