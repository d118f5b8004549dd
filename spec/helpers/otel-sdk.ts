// The real OpenTelemetry SDK, in-process, for telemetry specs (never a mock of the API): spans go to
// an in-memory exporter, metrics are collected on demand from a MetricReader, context travels by
// AsyncLocalStorage and `traceparent` by the W3C propagator. Registered globally, as a host's
// `NodeSDK.start()` would, so the gateway's own copy of `@opentelemetry/api` finds it.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { type DataPoint, type Histogram, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface OtelSdk {
  exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  /** Waits until `find` sees what it wants among the finished spans (spans end when responses close). */
  waitFor<T>(find: (spans: ReadableSpan[]) => T | undefined, timeoutMs?: number): Promise<T>;
  /** Every metric as collected now. */
  collect(): Promise<MetricData[]>;
  shutdown(): Promise<void>;
}

/** `spanProcessors` run before the exporter's (e.g. one that tracks spans left open). */
export function registerOtelSdk(options: { spanProcessors?: SpanProcessor[] } = {}): OtelSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [...(options.spanProcessors ?? []), new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  // as NodeSDK's default: trace context and baggage
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(tracerProvider);
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async waitFor(find, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = find(exporter.getFinishedSpans());
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error('the expected spans did not arrive');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async collect() {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The data points of one metric whose attributes include `match`. */
export function pointsOf(all: MetricData[], name: string, match: Record<string, unknown> = {}): Array<DataPoint<number | Histogram>> {
  const metric = all.find((candidate) => candidate.descriptor.name === name);
  if (!metric) return [];
  return (metric.dataPoints as Array<DataPoint<number | Histogram>>).filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value));
}

/** The sum of a counter's points, or the count of a histogram's, among those matching. */
export function totalOf(all: MetricData[], name: string, match: Record<string, unknown> = {}): number {
  return pointsOf(all, name, match).reduce((sum, point) => sum + (typeof point.value === 'number' ? point.value : point.value.count), 0);
}
