// The one telemetry facade the rest of lib/ calls (README "Observability"): spans and metrics through
// the host's `@opentelemetry/api`, never a pipeline of its own. Without the package nothing is
// emitted; with it but no SDK registered the API's no-op tracer and meter answer, and the gateway
// builds no attribute objects for spans that do not record.
import { createRequire } from 'node:module';
import { GatewayError } from '../errors/gateway-error.js';
import type { ProviderName, RouteName, Upstream } from '../types.js';
import { ATTR, DURATION_BUCKETS, GET_TASK_OPERATION, METRIC, OPERATIONS, PROVIDER_NAMES, SPAN_KIND, STATUS_ERROR } from './conventions.js';
import type { OtelApi, OtelAttributes, OtelCounter, OtelHistogram, OtelMeterProvider, OtelSpan, OtelSpanContext, OtelTracer, TelemetryOptions } from './otel-api.js';

const SCOPE = 'express-image-gateway';
const INVALID_TRACE_ID = '00000000000000000000000000000000';
/**
 * Most distinct `gen_ai.request.model` values the metrics carry; later ones are `_OTHER`. A model
 * name comes from the caller's body: each new value would be a new series in the host's metrics
 * backend (19 buckets per histogram series), so an invented name must not become one.
 */
const MAX_MODEL_LABELS = 100;
const OTHER = '_OTHER';
/** Longest model name put on a span or a metric: the caller's body sets it, with no limit of its own. */
const MAX_MODEL_CHARS = 256;
/** Longest opted-in prompt on a span, whichever route built it: an attribute is for reading, not for storing requests. */
const MAX_PROMPT_CHARS = 8192;

/** A span context as a task record keeps it (plain JSON): the create request's, for polls and callbacks. */
export interface TaskTraceContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** What an upstream attempt is for, as the GenAI conventions describe it. */
export interface AttemptInfo<T = unknown> {
  route: RouteName;
  /** The model the caller named (the upstream's own `model` wins when the resolver set one). */
  model: string;
  /** The `n` asked for, when the request has one. */
  choices?: number;
  /** The prompt text, read only when the host opted in to prompt capture and the span records. */
  prompt?: () => string | undefined;
  /** What the upstream answered (response model, token usage), read only when the span records. */
  response?: (result: T) => AttemptResponse | undefined;
}

export interface AttemptResponse {
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
}

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
  durationMs: number;
  idempotentReplay?: boolean;
}

/** `image_gateway.limit` values: which limit refused a request. */
export type LimitName = 'in-flight' | 'requests' | 'images' | 'video-seconds' | 'video-tasks' | (string & {});

interface Instruments {
  requestDuration: OtelHistogram;
  upstreamDuration: OtelHistogram;
  images: OtelCounter;
  videoSeconds: OtelCounter;
  taskTransitions: OtelCounter;
  callbackDeliveries: OtelCounter;
  limitRefusals: OtelCounter;
  storageBytes: OtelCounter;
}

export class Telemetry {
  /** Emits nothing: the API is absent or the host turned telemetry off. */
  static readonly off = new Telemetry(undefined, false);

  private readonly tracer: OtelTracer | undefined;
  private meterProvider: OtelMeterProvider | undefined;
  private cached: Instruments | undefined;
  private readonly hosts = new Map<string, string>();
  /** The model names admitted as metric attributes (see modelLabel). */
  private readonly models = new Set<string>();

  private reported = false;

  constructor(
    private readonly api: OtelApi | undefined,
    readonly capturePrompts: boolean,
    private readonly report: (error: unknown) => void = () => undefined,
  ) {
    // the API's proxy tracer follows a provider the host registers later
    this.tracer = api?.trace.getTracer(SCOPE);
  }

  /**
   * From the `telemetry` option (resolveOptions): false turns it off; otherwise the given or installed
   * API. `report` hears of the first failure of the host's pipeline (a span processor that throws).
   */
  static from(options: TelemetryOptions | false | undefined, report?: (error: unknown) => void): Telemetry {
    if (options === false) return Telemetry.off;
    const api = options?.api ?? loadInstalledApi();
    return api ? new Telemetry(api, options?.capturePrompts ?? false, report) : Telemetry.off;
  }

  /**
   * Runs a call into the host's SDK (its span processors and metric views run inside span.end() and
   * record()). One that throws is the host's bug, but it must neither fail the request it describes
   * nor, from a response's 'close' handler, crash the process: it is reported once and swallowed.
   */
  private guard<T>(fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (error) {
      if (!this.reported) {
        this.reported = true;
        this.report(error);
      }
      return fallback;
    }
  }

  /** True when an API was found (it may still be the no-op one). */
  get enabled(): boolean {
    return this.api !== undefined;
  }

  // ---- spans ----

  /** Starts the server span of a gateway request; undefined when it neither records nor carries a trace. */
  startRequest(route: RouteName, method: string, httpRoute: () => string): RequestTrace | undefined {
    return this.guard(() => this.startRequestSpan(route, method, httpRoute), undefined);
  }

  private startRequestSpan(route: RouteName, method: string, httpRoute: () => string): RequestTrace | undefined {
    const api = this.api;
    if (!api || !this.tracer) return undefined;
    const span = this.tracer.startSpan(route, { kind: SPAN_KIND.server });
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
  endRequest(trace: RequestTrace | undefined, end: RequestEnd): void {
    this.guard(() => this.endRequestSpan(trace, end), undefined);
  }

  private endRequestSpan(trace: RequestTrace | undefined, end: RequestEnd): void {
    const outcome = outcomeOf(end.status, end.errorCode);
    const instruments = this.instruments();
    if (instruments) {
      instruments.requestDuration.record(end.durationMs / 1000, defined({ [ATTR.route]: end.route, [ATTR.httpStatus]: end.status, [ATTR.outcome]: outcome, [ATTR.errorType]: end.errorCode }));
      if (end.images > 0) {
        instruments.images.add(
          end.images,
          defined({ [ATTR.route]: end.route, [ATTR.providerName]: end.provider && PROVIDER_NAMES[end.provider], [ATTR.requestModel]: this.modelLabel(end.model, true) }),
        );
      }
    }
    if (!trace) return;
    const { span } = trace;
    if (span.isRecording()) {
      span.setAttribute(ATTR.httpStatus, end.status);
      span.setAttribute(ATTR.outcome, outcome);
      if (end.model) span.setAttribute(ATTR.requestModel, clip(end.model));
      if (end.provider) span.setAttribute(ATTR.providerName, PROVIDER_NAMES[end.provider]);
      if (end.errorCode) span.setAttribute(ATTR.errorType, end.errorCode);
      if (end.idempotentReplay !== undefined) span.setAttribute(ATTR.idempotentReplay, end.idempotentReplay);
      // server spans: a 4xx is the caller's mistake, not a failure of the gateway
      if (outcome === 'server_error') span.setStatus({ code: STATUS_ERROR, ...(end.errorCode ? { message: end.errorCode } : {}) });
    }
    span.end();
  }

  /**
   * One upstream attempt as a CLIENT span (a child of the active span) and one upstream-duration measurement.
   * Not async itself: when nothing records (no SDK: a non-recording span outside any trace, no meter
   * provider) the call's own promise is returned, so no suspended frame waits beside each slow
   * upstream call (issue 15: memory per held request).
   */
  attempt<T>(upstream: Upstream, index: number, info: AttemptInfo<T> | undefined, run: () => Promise<T>): Promise<T> {
    const api = this.api;
    if (!api || !this.tracer) return runCatching(run);
    const operation = info ? OPERATIONS[info.route] : undefined;
    const model = clip(upstream.model ?? info?.model);
    const tracer = this.tracer;
    const span = this.guard(() => tracer.startSpan(`${operation?.operation ?? 'call'}${model ? ` ${model}` : ''}`, { kind: SPAN_KIND.client }), undefined);
    if (!span) return runCatching(run);
    if (!span.isRecording() && span.spanContext().traceId === INVALID_TRACE_ID && !this.guard(() => this.instruments(), undefined)) {
      // nothing observes this span or its duration: ended now, as it would be later, with nothing recorded
      this.guard(() => span.end(), undefined);
      return runCatching(run);
    }
    return this.attemptObserved(api, span, upstream, index, info, run, { operation, model });
  }

  private async attemptObserved<T>(
    api: OtelApi,
    span: OtelSpan,
    upstream: Upstream,
    index: number,
    info: AttemptInfo<T> | undefined,
    run: () => Promise<T>,
    named: { operation: (typeof OPERATIONS)[RouteName] | undefined; model: string | undefined },
  ): Promise<T> {
    const { operation, model } = named;
    const recording = span.isRecording();
    if (recording) {
      setAttributes(span, {
        [ATTR.operationName]: operation?.operation,
        [ATTR.providerName]: PROVIDER_NAMES[upstream.provider],
        [ATTR.requestModel]: model,
        [ATTR.outputType]: operation?.output,
        [ATTR.choiceCount]: info?.choices !== undefined && info.choices !== 1 ? info.choices : undefined,
        [ATTR.serverAddress]: this.hostOf(upstream.baseURL),
        [ATTR.attempt]: index + 1,
      });
      if (this.capturePrompts && info?.prompt) {
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
      this.guard(() => span.end(), undefined);
      this.guard(
        () =>
          this.instruments()?.upstreamDuration.record(
            (performance.now() - started) / 1000,
            defined({
              [ATTR.operationName]: operation?.operation,
              [ATTR.providerName]: PROVIDER_NAMES[upstream.provider],
              // the operator's model (the resolver named it) or one the upstream answered for; never a name
              // only a caller vouches for (a failed pass-through of an invented model)
              [ATTR.requestModel]: this.modelLabel(model, upstream.model !== undefined || answered),
              [ATTR.serverAddress]: this.hostOf(upstream.baseURL),
              [ATTR.errorType]: errorType,
            }),
          ),
        undefined,
      );
    }
  }

  /** The active span's context, to store with a task so its polls and callbacks find the create's trace. */
  currentTaskTrace(): TaskTraceContext | undefined {
    const context = this.api?.trace.getActiveSpan()?.spanContext();
    if (!context || context.traceId === INVALID_TRACE_ID) return undefined;
    return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags };
  }

  /** A task poll's upstream read: a CLIENT span in the current trace (or a new one), LINKED to the create's. */
  async taskPoll<T>(upstream: Upstream, model: string, created: TaskTraceContext | undefined, run: () => Promise<T>): Promise<T> {
    const api = this.api;
    if (!api || !this.tracer) return run();
    const name = clip(upstream.model ?? model);
    const tracer = this.tracer;
    const span = this.guard(() => tracer.startSpan(`${GET_TASK_OPERATION} ${name}`, { kind: SPAN_KIND.client, ...(created ? { links: [{ context: remote(created) }] } : {}) }), undefined);
    if (!span) return run();
    if (span.isRecording()) {
      setAttributes(span, {
        [ATTR.operationName]: GET_TASK_OPERATION,
        [ATTR.providerName]: PROVIDER_NAMES[upstream.provider],
        [ATTR.requestModel]: name,
        [ATTR.serverAddress]: this.hostOf(upstream.baseURL),
      });
    }
    return this.runSpan(span, run);
  }

  /**
   * One callback delivery: a CLIENT span, child of the create's span (so the receiver's work joins the
   * trace that created the task; `traceparent` goes out with the POST), and the delivery counter.
   */
  async callbackDelivery<T>(created: TaskTraceContext | undefined, status: string | undefined, run: () => Promise<T>): Promise<T> {
    const api = this.api;
    if (!api || !this.tracer) return run();
    const parent = created ? api.trace.setSpanContext(api.context.active(), remote(created)) : api.context.active();
    const tracer = this.tracer;
    const span = this.guard(() => tracer.startSpan('POST callback', { kind: SPAN_KIND.client }, parent), undefined);
    if (!span) return run();
    if (span.isRecording() && status !== undefined) span.setAttribute(ATTR.taskStatus, status);
    try {
      const result = await this.runSpan(span, run, parent);
      this.recordCallbackDelivery('delivered');
      return result;
    } catch (error) {
      this.recordCallbackDelivery('failed');
      throw error;
    }
  }

  /**
   * Runs background work (a scheduled task poll or callback delivery) in the empty context. A timer
   * armed while a request was handled carries that request's context (AsyncLocalStorage follows it),
   * so without this a poll minutes later would be a child of the long-ended create span, and the
   * create request's baggage would travel with it (README "Observability": a background poll starts
   * its own trace, linked to the create's).
   */
  detached<T>(fn: () => T): T {
    const api = this.api;
    return api?.ROOT_CONTEXT !== undefined ? api.context.with(api.ROOT_CONTEXT, fn) : fn();
  }

  /** Adds the active trace context to outgoing headers (`traceparent`), by the host's propagator. */
  inject(headers: Record<string, string>): void {
    const api = this.api;
    if (api) this.guard(() => api.propagation.inject(api.context.active(), headers), undefined);
  }

  // ---- metrics other parts (and the host's integrations) record ----

  /** A task moved to `status` (recorded by the writer whose compare-and-set won). */
  recordTaskTransition(status: string): void {
    this.guard(() => this.instruments()?.taskTransitions.add(1, { [ATTR.taskStatus]: status }), undefined);
  }

  /** Seconds of video a task produced. */
  recordVideoSeconds(seconds: number, provider: ProviderName, model: string): void {
    this.guard(() => this.instruments()?.videoSeconds.add(seconds, defined({ [ATTR.providerName]: PROVIDER_NAMES[provider], [ATTR.requestModel]: this.modelLabel(model, true) })), undefined);
  }

  /** A callback attempt's outcome: `delivered`, `failed` (retried or given up), `dropped` (the task moved on). */
  recordCallbackDelivery(outcome: 'delivered' | 'failed' | 'dropped'): void {
    this.guard(() => this.instruments()?.callbackDeliveries.add(1, { [ATTR.outcome]: outcome }), undefined);
  }

  /** A request refused by a limit (429): which limit, on which route. Never the tenant: that belongs in usage events. */
  recordLimitRefusal(limit: LimitName, route?: RouteName): void {
    this.guard(() => this.instruments()?.limitRefusals.add(1, defined({ [ATTR.limit]: limit, [ATTR.route]: route })), undefined);
  }

  /** Bytes written to (`put`) or removed from (`delete`) result storage. */
  recordStorageBytes(bytes: number, operation: 'put' | 'delete' | (string & {})): void {
    this.guard(() => this.instruments()?.storageBytes.add(bytes, { [ATTR.storageOperation]: operation }), undefined);
  }

  private async runSpan<T>(span: OtelSpan, run: () => Promise<T>, parent?: unknown): Promise<T> {
    const api = this.api!;
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
      this.guard(() => span.end(), undefined);
    }
  }

  /** The instruments of the current global meter provider (made again when the host registers another). */
  private instruments(): Instruments | undefined {
    if (!this.api) return undefined;
    const provider = this.api.metrics.getMeterProvider();
    if (provider !== this.meterProvider) {
      this.meterProvider = provider;
      const made = createInstruments(provider);
      // no meter provider registered: its instruments do nothing, so no attributes are built for them
      this.cached = made.requestDuration === this.noopHistogram() ? undefined : made;
    }
    return this.cached;
  }

  /** The API's no-op histogram (one shared object), when the API offers its no-op meter. */
  private noopHistogram(): OtelHistogram | undefined {
    try {
      return this.api?.createNoopMeter?.().createHistogram(METRIC.requestDuration);
    } catch {
      return undefined;
    }
  }

  /**
   * A model name as a metric attribute: as it is when already admitted, or when `admit` (the operator
   * named it, or an upstream answered for it) and fewer than MAX_MODEL_LABELS are admitted; otherwise
   * `_OTHER` (the conventions' value for an unbounded one). Spans keep the name: they are not series.
   */
  private modelLabel(name: string | undefined, admit: boolean): string | undefined {
    const model = clip(name);
    if (!model) return undefined;
    if (this.models.has(model)) return model;
    if (!admit || this.models.size >= MAX_MODEL_LABELS) return OTHER;
    this.models.add(model);
    return model;
  }

  /** `server.address` of an upstream: parsed once per base URL (a small, bounded cache). */
  private hostOf(baseURL: string): string | undefined {
    let host = this.hosts.get(baseURL);
    if (host === undefined) {
      try {
        host = new URL(baseURL).hostname;
      } catch {
        host = '';
      }
      if (this.hosts.size >= 256) this.hosts.clear();
      this.hosts.set(baseURL, host);
    }
    return host || undefined;
  }
}

function createInstruments(provider: OtelMeterProvider): Instruments {
  const meter = provider.getMeter(SCOPE);
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } };
  return {
    requestDuration: meter.createHistogram(METRIC.requestDuration, { ...seconds, description: 'Duration of gateway requests, by route and outcome.' }),
    upstreamDuration: meter.createHistogram(METRIC.upstreamDuration, { ...seconds, description: 'Duration of upstream attempts, by provider and model.' }),
    images: meter.createCounter(METRIC.images, { unit: '{image}', description: 'Images answered to callers.' }),
    videoSeconds: meter.createCounter(METRIC.videoSeconds, { unit: 's', description: 'Seconds of video generated by finished tasks.' }),
    taskTransitions: meter.createCounter(METRIC.taskTransitions, { unit: '{transition}', description: 'Video task state transitions, by the state reached.' }),
    callbackDeliveries: meter.createCounter(METRIC.callbackDeliveries, { unit: '{delivery}', description: 'Callback delivery attempts, by outcome.' }),
    limitRefusals: meter.createCounter(METRIC.limitRefusals, { unit: '{request}', description: 'Requests refused by a limit, by limit and route.' }),
    storageBytes: meter.createCounter(METRIC.storageBytes, { unit: 'By', description: 'Bytes written to or removed from result storage.' }),
  };
}

/**
 * The installed `@opentelemetry/api`, loaded synchronously so the first request is already traced. A
 * CommonJS require works from both bundles (the API registers its globals under one process-wide
 * symbol, so the host's ESM copy and this one share the SDK it registers).
 */
function loadInstalledApi(): OtelApi | undefined {
  try {
    const load = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    return load('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}

/** The attributes without the absent ones: an exporter would write an absent value as an empty label. */
function defined(attributes: OtelAttributes): OtelAttributes {
  for (const key of Object.keys(attributes)) if (attributes[key] === undefined) delete attributes[key];
  return attributes;
}

function setAttributes(span: OtelSpan, attributes: OtelAttributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}

/** A model name cut to MAX_MODEL_CHARS (a span attribute, a span name, a metric label). */
function clip<T extends string | undefined>(model: T): T {
  return (model !== undefined && model.length > MAX_MODEL_CHARS ? model.slice(0, MAX_MODEL_CHARS) : model) as T;
}

function remote(context: TaskTraceContext): OtelSpanContext {
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags, isRemote: true };
}

function outcomeOf(status: number, errorCode: string | undefined): string {
  if (status === 499) return 'client_closed';
  // a 2xx with an error code: the response had begun (a stream) when it failed; it was cut, not a success
  if (status >= 500 || (status < 400 && errorCode !== undefined)) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'success';
}

/** `error.type`: the gateway's error code (low cardinality, never a message: messages may quote an answer). */
function errorTypeOf(error: unknown): string {
  if (error instanceof GatewayError) return error.code;
  if (error instanceof Error && error.name !== 'Error') return error.name;
  return '_OTHER';
}

/** `run()`, with a synchronous throw turned into a rejection (as an async function would). */
function runCatching<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what was thrown, as an async function would reject with it
    return Promise.reject(error);
  }
}
