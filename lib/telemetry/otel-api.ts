// The small slice of `@opentelemetry/api` the gateway uses, declared here as structural types: the API
// is an optional peer, so the published types must not require it (docs/architecture.md "Telemetry").
// `import * as api from '@opentelemetry/api'` satisfies OtelApi as it is.

/** An attribute value: the gateway only ever sets strings, numbers and booleans. */
export type OtelAttributeValue = string | number | boolean;
export type OtelAttributes = Record<string, OtelAttributeValue | undefined>;

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: OtelAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  updateName(name: string): unknown;
  isRecording(): boolean;
  end(endTime?: number): void;
}

export interface OtelSpanOptions {
  kind?: number;
  attributes?: OtelAttributes;
  links?: Array<{ context: OtelSpanContext }>;
  root?: boolean;
}

export interface OtelTracer {
  startSpan(name: string, options?: OtelSpanOptions, context?: unknown): OtelSpan;
}

export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}

export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface OtelMeter {
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
  createCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
}

export interface OtelMeterProvider {
  getMeter(name: string, version?: string): OtelMeter;
}

/** What the gateway needs of `@opentelemetry/api`; pass the module itself. */
export interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getActiveSpan(): OtelSpan | undefined;
    setSpan(context: unknown, span: OtelSpan): unknown;
    setSpanContext(context: unknown, spanContext: OtelSpanContext): unknown;
    /** The global tracer provider: the API's proxy, which delegates to the SDK's once one is registered. */
    getTracerProvider?(): unknown;
  };
  context: {
    active(): unknown;
    with<T>(context: unknown, fn: () => T): T;
  };
  propagation: {
    inject(context: unknown, carrier: Record<string, string>): void;
  };
  metrics: {
    getMeterProvider(): OtelMeterProvider;
  };
  /**
   * The API's no-op meter: instruments of an unregistered meter provider are its no-op ones, and
   * nothing is built for them per request (docs/observability.md: no SDK, no cost).
   */
  createNoopMeter?(): OtelMeter;
  /** The empty context: background work (task polls, callback deliveries) runs in it, not in the request that scheduled it. */
  ROOT_CONTEXT?: unknown;
  /**
   * The API's proxy provider: a new one delegates to the API's no-op tracer provider, which is how the
   * gateway tells that no SDK's tracer is registered (docs/observability.md: no SDK, no cost).
   */
  ProxyTracerProvider?: new () => { getDelegate(): unknown };
}

/**
 * The `telemetry` option (docs/observability.md).
 * @example telemetry: { api: await import('@opentelemetry/api'), capturePrompts: false }
 */
export interface TelemetryOptions {
  /**
   * The `@opentelemetry/api` module to emit through. Default: the one the host installed, found at
   * router creation (none installed: nothing is emitted). Pass it when a bundler hides the package.
   * @example telemetry: { api: await import('@opentelemetry/api') }
   */
  api?: OtelApi;
  /**
   * Put the prompt text on the upstream attempt spans (`gen_ai.input.messages`). Default false:
   * prompts may hold personal data; keys and image bytes are never recorded either way.
   * @example telemetry: { capturePrompts: true }
   */
  capturePrompts?: boolean;
}
