// Endpoints that heal (docs/video-tasks-and-callbacks.md "Endpoints that heal"): an endpoint is one
// tenant's callback URL origin and path (its query aside). Every attempt's outcome is counted in the task
// store (endpoint-records.ts); past `deliveries.disableAfter` the endpoint is disabled, the operator's
// `onEndpointDisabled` hook is told once (the store says which instance disabled it), and its deliveries
// are recorded `paused` instead of attempted. Enabling it sends what was paused, oldest first, one after
// another: one paused delivery is queued, and each that ends (delivered, or given up) queues the next, so
// the chain runs on whichever instance runs the job and survives a restart with a shared scheduler.
import { randomBytes } from 'node:crypto';
import { clock } from '../../clock.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Logger } from '../../options/host-hooks.js';
import type { EndpointDisabledEvent } from '../../options/delivery-options.js';
import type { DeliveryJob, JobScheduler } from '../../stores/scheduling/job-scheduler.js';
import type { DeliveryLogStore, DeliveryQuery, DeliveryRecord } from '../../stores/tasks/delivery-records.js';
import type { EndpointHealth, EndpointHealthStore, EndpointRef, EndpointRule } from '../../stores/tasks/endpoint-records.js';
import type { TaskStore } from '../../stores/tasks/task-store.js';
import type { ResolvedDeliveries } from '../options/delivery-options.js';

/** What enabling an endpoint did. */
export interface EndpointEnabled {
  /** The endpoint: origin and path. */
  url: string;
  /** Endpoints that were disabled and are enabled now (one per tenant; 0 when none was disabled). */
  enabled: number;
  /** Paused deliveries queued to be sent, oldest first, one after another. */
  queued: number;
}

export type EndpointDisabledHook = (event: EndpointDisabledEvent) => void | Promise<void>;

/** Paused deliveries read per page while looking for an endpoint's oldest. */
const PAGE = 100;

/**
 * The job that sends a recorded delivery again, as it was recorded: a replay (`webhook-replay: true`) or
 * a paused delivery resumed; a token of its own keys it beside the delivery it repeats.
 */
export function recordedJob(record: DeliveryRecord, as: 'replay' | 'resume'): DeliveryJob {
  const job: DeliveryJob = { eventId: record.id, taskId: record.taskId, url: record.url, body: record.body, status: record.event, owner: record.owner };
  job[as] = randomBytes(9).toString('base64url');
  return job;
}

function chainKey(endpoint: EndpointRef): string {
  return `${endpoint.tenant}\n${endpoint.url}`;
}

/** The endpoint of a callback URL: its origin and path, without query or fragment; undefined when it is no http(s) URL. */
export function endpointUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  return `${parsed.origin}${parsed.pathname}`;
}

export class Endpoints {
  private readonly health?: EndpointHealthStore;
  private readonly rule: EndpointRule;
  /**
   * The paused deliveries still to send of each endpoint whose chain runs here, oldest first, as this
   * instance last listed them: each step of a chain takes the next from here instead of listing them
   * all again, so enabling an endpoint with n paused deliveries reads the log O(n) times in all, not
   * O(n²). The claim (paused to pending) stays the store's, so a record another instance took is skipped.
   */
  private readonly chains = new Map<string, DeliveryRecord[]>();

  constructor(
    settings: ResolvedDeliveries,
    store: TaskStore,
    private readonly deliveries: DeliveryLogStore,
    private readonly scheduler: JobScheduler,
    private readonly hook: EndpointDisabledHook | undefined,
    private readonly logger: Logger,
  ) {
    this.rule = Object.freeze({ attempts: settings.disableAfterAttempts, failingMs: settings.disableAfterMs, keepMs: settings.retentionMs });
    const { recordEndpointAttempt, getEndpoint, enableEndpoint, listDisabledEndpoints } = store;
    if (recordEndpointAttempt && getEndpoint && enableEndpoint && listDisabledEndpoints) {
      this.health = {
        recordEndpointAttempt: recordEndpointAttempt.bind(store),
        getEndpoint: getEndpoint.bind(store),
        enableEndpoint: enableEndpoint.bind(store),
        listDisabledEndpoints: listDisabledEndpoints.bind(store),
      };
    } else {
      logger.warn({}, 'the task store has no endpoint methods (recordEndpointAttempt, getEndpoint, enableEndpoint, listDisabledEndpoints): no callback endpoint is ever disabled');
    }
  }

  /** The endpoint a job delivers to; undefined when its tenant or URL is unknown. */
  of(job: Pick<DeliveryJob, 'url' | 'owner'>): EndpointRef | undefined {
    const url = endpointUrl(job.url);
    return url !== undefined && job.owner !== undefined ? { tenant: job.owner, url } : undefined;
  }

  /** True when the endpoint is disabled: its deliveries are paused, not attempted. */
  async disabled(endpoint: EndpointRef | undefined): Promise<boolean> {
    if (!this.health || !endpoint) return false;
    return (await this.health.getEndpoint(endpoint))?.disabled === true;
  }

  /** Counts one attempt's outcome; tells the hook when this attempt disabled the endpoint. Never throws. */
  async outcome(endpoint: EndpointRef, ok: boolean, at: number): Promise<void> {
    if (!this.health) return;
    try {
      const { health, disabledNow } = await this.health.recordEndpointAttempt(endpoint, { ok, at }, this.rule);
      if (disabledNow) this.announce(health);
    } catch (error) {
      this.logger.warn({ tenant: endpoint.tenant, endpoint: endpoint.url, error: messageOf(error) }, 'the health of a callback endpoint could not be recorded');
    }
  }

  /**
   * Enables `url`'s endpoint of `tenant` (or of every tenant whose endpoint it is, when none is named) and
   * queues its paused deliveries. An endpoint that is not disabled is left as it is.
   */
  async enable(url: unknown, tenant?: string): Promise<EndpointEnabled> {
    const target = typeof url === 'string' ? endpointUrl(url) : undefined;
    if (target === undefined) throw GatewayError.invalidRequest('url must be an http or https URL: the callback URL whose endpoint to enable', 'url');
    const result: EndpointEnabled = { url: target, enabled: 0, queued: 0 };
    if (!this.health) return result;
    const endpoints: EndpointRef[] = tenant !== undefined ? [{ tenant, url: target }] : (await this.health.listDisabledEndpoints()).filter((health) => health.url === target);
    for (const endpoint of endpoints) {
      // one caller alone sees the endpoint go from disabled to enabled: one chain of paused deliveries
      if (!(await this.health.enableEndpoint(endpoint, this.rule))) {
        // not disabled, yet deliveries still paused (their chain's job was lost with a scheduler that
        // forgot it): they are sent now, unless this instance is running their chain
        if (!this.chains.has(chainKey(endpoint))) {
          const orphans = await this.paused(endpoint);
          result.queued += orphans.length;
          if (orphans.length > 0) this.logger.info({ tenant: endpoint.tenant, endpoint: endpoint.url, paused: orphans.length }, 'paused deliveries of an enabled endpoint are sent');
          await this.queueOldest(endpoint, orphans);
        }
        continue;
      }
      result.enabled += 1;
      const paused = await this.paused(endpoint);
      result.queued += paused.length;
      this.logger.info({ tenant: endpoint.tenant, endpoint: endpoint.url, paused: paused.length }, 'a callback endpoint was enabled');
      await this.queueOldest(endpoint, paused);
    }
    return result;
  }

  /** A delivery an enabled endpoint was sending ended: its next paused one is queued. Never throws. */
  async resumed(job: DeliveryJob): Promise<void> {
    const endpoint = this.of(job);
    if (job.resume === undefined || !endpoint) return;
    try {
      // disabled again meanwhile: the rest stay paused until it is enabled once more
      if (await this.disabled(endpoint)) {
        this.chains.delete(chainKey(endpoint));
        return;
      }
      const known = this.chains.get(chainKey(endpoint));
      // the rest as listed when the chain started here; once it is used up, one more listing finds any
      // paused since (or the chain came from another instance, and this one has not listed yet)
      if (known && known.length > 0 && (await this.queueOldest(endpoint, known))) return;
      await this.queueOldest(endpoint, await this.paused(endpoint));
    } catch (error) {
      this.logger.warn({ tenant: endpoint.tenant, endpoint: endpoint.url, error: messageOf(error) }, 'the next paused delivery of an enabled endpoint could not be queued');
    }
  }

  /**
   * Queues the oldest of `paused` that this caller claims (pending again), and keeps the rest for the
   * chain's next step; false when another instance took each.
   */
  private async queueOldest(endpoint: EndpointRef, paused: DeliveryRecord[]): Promise<boolean> {
    const key = chainKey(endpoint);
    for (;;) {
      const record = paused.shift();
      if (!record) {
        this.chains.delete(key);
        return false;
      }
      const claimed = await this.deliveries.updateDelivery(record.id, { state: 'pending', from: 'paused' });
      if (!claimed) continue;
      if (paused.length > 0) this.chains.set(key, paused);
      else this.chains.delete(key);
      await this.scheduler.scheduleDelivery(recordedJob(record, 'resume'));
      return true;
    }
  }

  /** The endpoint's paused deliveries, oldest first. */
  private async paused(endpoint: EndpointRef): Promise<DeliveryRecord[]> {
    const found: DeliveryRecord[] = [];
    let after: DeliveryQuery['after'];
    for (;;) {
      const page = await this.deliveries.listDeliveries({ owner: endpoint.tenant, state: 'paused', limit: PAGE, ...(after ? { after } : {}) });
      found.push(...page.deliveries.filter((record) => endpointUrl(record.url) === endpoint.url));
      const last = page.deliveries.at(-1);
      if (!page.hasMore || !last) return found.reverse();
      after = { createdAt: last.createdAt, id: last.id };
    }
  }

  /** The hook, told once; what it throws or rejects with is logged, never thrown. */
  private announce(health: EndpointHealth): void {
    const { origin, pathname } = new URL(health.url);
    const event: EndpointDisabledEvent = {
      url: health.url,
      origin,
      path: pathname,
      tenant: health.tenant,
      reason: health.reason ?? 'attempts',
      disabledAt: health.disabledAt ?? clock().now(),
      failures: health.failures,
      failingSince: health.failingSince ?? health.disabledAt ?? clock().now(),
      lastSuccessAt: health.lastSuccessAt ?? null,
    };
    this.logger.warn({ tenant: event.tenant, endpoint: event.url, reason: event.reason, failures: event.failures }, 'a callback endpoint was disabled: its deliveries are paused until it is enabled');
    if (!this.hook) return;
    const failed = (error: unknown): void => this.logger.error({ tenant: event.tenant, endpoint: event.url, error: messageOf(error) }, 'onEndpointDisabled threw');
    try {
      Promise.resolve(this.hook(event)).catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
