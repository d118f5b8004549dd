// The one telemetry facade the rest of lib/ calls (docs/observability.md): spans and metrics through
// the host's `@opentelemetry/api`, never a pipeline of its own. Without the package nothing is
// emitted; with it but no SDK registered the API's no-op tracer and meter answer, and the gateway
// builds no attribute objects for spans that do not record. Its parts: request spans
// (request-spans.ts), upstream attempt spans (attempt-spans.ts), task links (task-links.ts) and the
// metric instruments (metrics.ts).
import { rejectionOf } from '../errors/rejection-of.js';
import type { ProviderName, RouteName, Upstream } from '../types.js';
import { type AttemptInfo, attemptSpan } from './attempt-spans.js';
import { loadInstalledApi } from './installed-api.js';
import { type LimitName, Metrics, SCOPE } from './metrics.js';
import type { OtelApi, TelemetryOptions } from './otel-api.js';
import { type RequestEnd, type RequestTrace, endRequestSpan, startRequestSpan } from './request-spans.js';
import { type TaskTraceContext, callbackDeliverySpan, currentTaskTrace, taskPollSpan, taskRunSpan } from './task-links.js';
import { ServerAddresses, type TelemetryScope } from './telemetry-scope.js';

// the types of its methods, for their callers: the facade is the one telemetry module they import
export type { AttemptInfo, RequestTrace, TaskTraceContext };

/** Each provider's `gen_ai.provider.name`: declared by the providers, handed in by whoever builds the Telemetry. */
export type GenAiProviderNames = Readonly<Partial<Record<ProviderName, string>>>;

export class Telemetry {
  /** Emits nothing: the API is absent or the host turned telemetry off. */
  static readonly off = new Telemetry(undefined, false, {});

  private readonly metrics: Metrics;
  /** The span parts' shared state; undefined when no API was found. */
  private readonly scope: TelemetryScope | undefined;
  private reported = false;
  /** The API's no-op tracer provider, which its global proxy delegates to until an SDK registers one. */
  private readonly noopTracers: unknown;

  constructor(
    private readonly api: OtelApi | undefined,
    readonly capturePrompts: boolean,
    providerNames: GenAiProviderNames,
    private readonly report: (error: unknown) => void = () => undefined,
  ) {
    this.metrics = new Metrics(api, providerNames);
    // the API's proxy tracer follows a provider the host registers later
    const tracer = api?.trace.getTracer(SCOPE);
    const addresses = new ServerAddresses();
    this.scope = api && tracer ? { api, tracer, capturePrompts, metrics: this.metrics, guard: (fn, fallback) => this.guard(fn, fallback), hostOf: (baseURL) => addresses.of(baseURL) } : undefined;
    this.noopTracers = noopTracerProvider(api);
  }

  /**
   * From the `telemetry` option (resolveOptions): false turns it off; otherwise the given or installed
   * API. `report` hears of the first failure of the host's pipeline (a span processor that throws).
   */
  static from(options: TelemetryOptions | false | undefined, providerNames: GenAiProviderNames, report?: (error: unknown) => void): Telemetry {
    if (options === false) return Telemetry.off;
    const api = options?.api ?? loadInstalledApi();
    return api ? new Telemetry(api, options?.capturePrompts ?? false, providerNames, report) : Telemetry.off;
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

  /**
   * Nothing would record a span now: no API, or no SDK's tracer behind the API's global provider and
   * no active span whose trace a new one would continue. Asked on every request, not once, since an
   * SDK registered after the router is found: two calls into the API, and then no span is started
   * and no part of the span modules runs (docs/observability.md: no SDK, no cost).
   */
  private tracesQuiet(): boolean {
    const api = this.api;
    if (!api) return true;
    if (this.noopTracers === undefined) return false;
    const provider = api.trace.getTracerProvider?.() as { getDelegate?: () => unknown } | undefined;
    return provider?.getDelegate?.() === this.noopTracers && api.trace.getActiveSpan() === undefined;
  }

  /** Nothing would record a measurement now: no API, or the global meter provider is still the one whose instruments were found to be no-ops (metrics.ts). */
  private metricsQuiet(): boolean {
    const api = this.api;
    return !api || api.metrics.getMeterProvider() === this.metrics.quietProvider;
  }

  // ---- spans ----

  /** Starts the server span of a gateway request; undefined when it neither records nor carries a trace. */
  startRequest(route: RouteName, method: string, httpRoute: () => string): RequestTrace | undefined {
    const scope = this.scope;
    return scope && !this.tracesQuiet() ? this.guard(() => startRequestSpan(scope, route, method, httpRoute), undefined) : undefined;
  }

  /** Ends the request: its span (when there is one) and the request-duration metric. */
  /** The operator's configured model names (imageModels): their own metric label always, taking no slot. */
  reserveModelLabels(names: Iterable<string>): void {
    // Telemetry.off is shared by every router with telemetry off, and records nothing
    if (this.api) this.metrics.reserveModels(names);
  }

  endRequest(trace: RequestTrace | undefined, end: RequestEnd): void {
    // no span to end and no metric that records: nothing to do
    if (trace === undefined && this.metricsQuiet()) return;
    this.guard(() => endRequestSpan(this.metrics, trace, end), undefined);
  }

  /**
   * One upstream attempt as a CLIENT span (a child of the active span) and one upstream-duration
   * measurement (attempt-spans.ts). Not async itself: with nothing to observe, the call's own promise.
   */
  attempt<T>(upstream: Upstream, index: number, info: AttemptInfo<T> | undefined, run: () => Promise<T>): Promise<T> {
    return this.scope && !(this.tracesQuiet() && this.metricsQuiet()) ? attemptSpan(this.scope, upstream, index, info, run) : rejectionOf(run);
  }

  /** The active span's context, to store with a task so its polls and callbacks find the create's trace. */
  currentTaskTrace(): TaskTraceContext | undefined {
    return currentTaskTrace(this.api);
  }

  /** A task poll's upstream read: a CLIENT span in the current trace (or a new one), LINKED to the create's. */
  async taskPoll<T>(upstream: Upstream, model: string, created: TaskTraceContext | undefined, run: () => Promise<T>): Promise<T> {
    return this.scope ? taskPollSpan(this.scope, upstream, model, created, run) : run();
  }

  /** An image task's run: an INTERNAL span LINKED to the create's, parent of the run's upstream attempts. */
  async taskRun<T>(model: string, created: TaskTraceContext | undefined, run: () => Promise<T>): Promise<T> {
    return this.scope ? taskRunSpan(this.scope, model, created, run) : run();
  }

  /** One callback delivery: a CLIENT span, child of the create's span, and the delivery counter. */
  async callbackDelivery<T>(created: TaskTraceContext | undefined, status: string | undefined, run: () => Promise<T>): Promise<T> {
    return this.scope ? callbackDeliverySpan(this.scope, created, status, run) : run();
  }

  /**
   * Runs background work (a scheduled task poll or callback delivery) in the empty context. A timer
   * armed while a request was handled carries that request's context (AsyncLocalStorage follows it),
   * so without this a poll minutes later would be a child of the long-ended create span, and the
   * create request's baggage would travel with it (docs/observability.md: a background poll starts
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
    this.guard(() => this.metrics.recordTaskTransition(status), undefined);
  }

  /** Seconds of video a task produced. */
  recordVideoSeconds(seconds: number, provider: ProviderName, model: string): void {
    this.guard(() => this.metrics.recordVideoSeconds(seconds, provider, model), undefined);
  }

  /** A callback attempt's outcome: `delivered`, `failed` (retried or given up), `dropped` (the task moved on). */
  recordCallbackDelivery(outcome: 'delivered' | 'failed' | 'dropped'): void {
    this.guard(() => this.metrics.recordCallbackDelivery(outcome), undefined);
  }

  /** A request refused by a limit (429): which limit, on which route. Never the tenant: that belongs in usage events. */
  recordLimitRefusal(limit: LimitName, route?: RouteName): void {
    this.guard(() => this.metrics.recordLimitRefusal(limit, route), undefined);
  }

  /** Bytes written to (`put`) or removed from (`delete`) result storage. */
  recordStorageBytes(bytes: number, operation: 'put' | 'delete' | (string & {})): void {
    this.guard(() => this.metrics.recordStorageBytes(bytes, operation), undefined);
  }

  /** An upstream's breaker changed state: the state reached, why, and its provider. */
  recordUpstreamHealth(state: string, reason: string, provider: ProviderName): void {
    this.guard(() => this.metrics.recordUpstreamHealth(state, reason, provider), undefined);
  }
}

/**
 * The API's no-op tracer provider: what a new proxy provider delegates to (one object per copy of the
 * API). Undefined when the API does not offer its proxy: then every span is started and asked.
 */
function noopTracerProvider(api: OtelApi | undefined): unknown {
  try {
    return api?.ProxyTracerProvider ? new api.ProxyTracerProvider().getDelegate() : undefined;
  } catch {
    return undefined;
  }
}
