// The gateway's metric instruments (docs/observability.md), made from the host's current global
// meter provider, and the metrics other parts record. A model name becomes a metric attribute only
// within a bound: each new value is a new series in the host's metrics backend.
import type { ProviderName, RouteName } from '../types.js';
import { ATTR, DURATION_BUCKETS, METRIC } from './conventions.js';
import type { OtelApi, OtelCounter, OtelHistogram, OtelMeterProvider } from './otel-api.js';
import { clip, defined } from './span-values.js';

/** The instrumentation scope of every tracer and meter the gateway asks for. */
export const SCOPE = 'express-image-gateway';
/**
 * Most distinct `gen_ai.request.model` values the metrics carry beside the operator's configured
 * models; later ones are `_OTHER`. A model name comes from the caller's body: each new value would be
 * a new series in the host's metrics backend (19 buckets per histogram series), so an invented name
 * must not become one, and one tenant must not fill the slots others' models need.
 */
const MAX_MODEL_LABELS = 100;
/** Slots one tenant's requests can admit: 150 invented names of one tenant take 10, never all 100. */
const MAX_MODEL_LABELS_PER_TENANT = 10;
const OTHER = '_OTHER';

/** Why a model name not yet labelled may become a label: see Metrics.modelLabel. */
export type ModelAdmission = 'routed' | 'caller' | false;

/** `image_gateway.limit` values: which limit refused a request. */
export type LimitName = 'in-flight' | 'requests' | 'images' | 'video-seconds' | 'video-tasks' | 'budget' | (string & {});

export interface Instruments {
  requestDuration: OtelHistogram;
  upstreamDuration: OtelHistogram;
  images: OtelCounter;
  videoSeconds: OtelCounter;
  taskTransitions: OtelCounter;
  callbackDeliveries: OtelCounter;
  limitRefusals: OtelCounter;
  storageBytes: OtelCounter;
  upstreamHealth: OtelCounter;
}

/** The metrics of one Telemetry. Its calls are not guarded here: Telemetry runs each inside its guard. */
export class Metrics {
  private meterProvider: OtelMeterProvider | undefined;
  private cached: Instruments | undefined;
  /** The model names admitted as metric attributes (see modelLabel). */
  private readonly models = new Set<string>();
  /** The operator's own model names (imageModels): always their own label, outside the slots. */
  private readonly configured = new Set<string>();
  /** How many slots each tenant's requests took. */
  private readonly perTenant = new Map<string, number>();
  /**
   * The meter provider whose instruments were found to be the API's no-op ones (no SDK's meter is
   * registered): while it is still the global one, the facade (telemetry.ts) records nothing and
   * does not call here at all.
   */
  quietProvider: OtelMeterProvider | undefined;

  /** `providerNames`: each provider's `gen_ai.provider.name`, as the providers declare it. */
  constructor(
    private readonly api: OtelApi | undefined,
    private readonly providerNames: Readonly<Partial<Record<ProviderName, string>>>,
  ) {}

  /** The instruments of the current global meter provider (made again when the host registers another). */
  instruments(): Instruments | undefined {
    if (!this.api) return undefined;
    const provider = this.api.metrics.getMeterProvider();
    if (provider !== this.meterProvider) {
      this.meterProvider = provider;
      const made = createInstruments(provider);
      // no meter provider registered: its instruments do nothing, so no attributes are built for them
      this.cached = made.requestDuration === this.noopHistogram() ? undefined : made;
      this.quietProvider = this.cached ? undefined : provider;
    }
    return this.cached;
  }

  /** The operator's configured model names: labelled as they are, taking no slot. */
  reserveModels(names: Iterable<string>): void {
    for (const name of names) {
      const model = clip(name);
      if (model) this.configured.add(model);
    }
  }

  /**
   * A model name as a metric attribute: as it is when configured or already admitted; otherwise
   * admitted while fewer than MAX_MODEL_LABELS are taken, when `admit` is `'routed'` (the resolver
   * named this upstream model: the operator's name) or `'caller'` (a caller's name an upstream
   * answered for) for a known `tenant` that has taken fewer than MAX_MODEL_LABELS_PER_TENANT slots;
   * else `_OTHER` (the conventions' value for an unbounded one). Spans keep the name: they are not series.
   */
  modelLabel(name: string | undefined, admit: ModelAdmission, tenant?: string): string | undefined {
    const model = clip(name);
    if (!model) return undefined;
    if (this.configured.has(model) || this.models.has(model)) return model;
    if (admit === false || this.models.size >= MAX_MODEL_LABELS) return OTHER;
    if (admit === 'caller') {
      if (tenant === undefined) return OTHER;
      const taken = this.perTenant.get(tenant) ?? 0;
      if (taken >= MAX_MODEL_LABELS_PER_TENANT) return OTHER;
      this.perTenant.set(tenant, taken + 1);
    }
    this.models.add(model);
    return model;
  }

  /** `gen_ai.provider.name` of a provider. */
  providerName(provider: ProviderName): string | undefined {
    return this.providerNames[provider];
  }

  /** A task moved to `status` (recorded by the writer whose compare-and-set won). */
  recordTaskTransition(status: string): void {
    this.instruments()?.taskTransitions.add(1, { [ATTR.taskStatus]: status });
  }

  /** Seconds of video a task produced. */
  recordVideoSeconds(seconds: number, provider: ProviderName, model: string): void {
    this.instruments()?.videoSeconds.add(seconds, defined({ [ATTR.providerName]: this.providerName(provider), [ATTR.requestModel]: this.modelLabel(model, false) }));
  }

  /** A callback attempt's outcome: `delivered`, `failed` (retried or given up), `dropped` (the task moved on). */
  recordCallbackDelivery(outcome: 'delivered' | 'failed' | 'dropped'): void {
    this.instruments()?.callbackDeliveries.add(1, { [ATTR.outcome]: outcome });
  }

  /** A request refused by a limit (429): which limit, on which route. Never the tenant: that belongs in usage events. */
  recordLimitRefusal(limit: LimitName, route?: RouteName): void {
    this.instruments()?.limitRefusals.add(1, defined({ [ATTR.limit]: limit, [ATTR.route]: route }));
  }

  /** Bytes written to (`put`) or removed from (`delete`) result storage. */
  recordStorageBytes(bytes: number, operation: 'put' | 'delete' | (string & {})): void {
    this.instruments()?.storageBytes.add(bytes, { [ATTR.storageOperation]: operation });
  }

  /** An upstream's breaker changed state (docs/routing-and-health.md): the state reached, why, and the provider. */
  recordUpstreamHealth(state: string, reason: string, provider: ProviderName): void {
    this.instruments()?.upstreamHealth.add(1, defined({ [ATTR.upstreamState]: state, [ATTR.upstreamReason]: reason, [ATTR.providerName]: this.providerName(provider) }));
  }

  /** The API's no-op histogram (one shared object), when the API offers its no-op meter. */
  private noopHistogram(): OtelHistogram | undefined {
    try {
      return this.api?.createNoopMeter?.().createHistogram(METRIC.requestDuration);
    } catch {
      return undefined;
    }
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
    upstreamHealth: meter.createCounter(METRIC.upstreamHealth, { unit: '{change}', description: 'Upstream circuit breaker state changes, by the state reached and the reason.' }),
  };
}
