// A callback delivery job when the scheduler runs it (contract §6): dropped when the task has moved
// past the job's state (a slow or retried delivery a later one overtook), kept `paused` when its
// endpoint is disabled, otherwise one attempt of callback-delivery.ts inside the task's trace, its
// outcome counted for the endpoint's health (docs/video-tasks-and-callbacks.md "Endpoints that heal").
// At most `deliveries.perEndpointInFlight` attempts to one endpoint run at once here: a job past that
// is postponed, which frees the scheduler's worker for other endpoints. Whichever scheduler runs it,
// the rules are the same.
import { clock } from '../../clock.js';
import { type DeliveryJob, DeliveryPostponed } from '../../stores/scheduling/job-scheduler.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import { EndpointGate } from '../deliveries/endpoint-gate.js';
import { endpointUrl } from '../deliveries/endpoints.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { type CallbackDeliverer, CallbackDeliveryError, createCallbackDeliverer } from './callback-delivery.js';
import { isPassedStatus, isTerminalStatus } from './task-state-order.js';

/** How long a postponed job waits where it may run in another process (BullMQ), ms; more while many wait. */
const POSTPONE_MS = 250;
const MOST_POSTPONE_MS = 30_000;

export class DeliveryJobs {
  private readonly deliverer: CallbackDeliverer;
  private readonly gate: EndpointGate;
  /** Jobs postponed per endpoint since a slot of it last freed here: the longer the line, the longer the wait. */
  private readonly postponed = new Map<string, number>();

  constructor(
    private readonly options: ResolvedOptions,
    http: UpstreamHttp,
  ) {
    this.deliverer = createCallbackDeliverer({
      http,
      policy: options.callbacks, // allowLocal and the proxy host lists (contract §6.3)
      signingSecret: options.callbacks.signingSecret,
      timeoutMs: options.callbacks.timeoutMs,
    });
    this.gate = new EndpointGate(options.deliveries.perEndpointInFlight);
  }

  /** One delivery attempt within its endpoint's bound of attempts in flight, or DeliveryPostponed. */
  async deliver(job: DeliveryJob): Promise<void> {
    const gateKey = `${job.owner ?? ''}\n${endpointUrl(job.url) ?? job.url}`;
    const release = this.gate.enter(gateKey);
    if (!release) {
      const line = (this.postponed.get(gateKey) ?? 0) + 1;
      this.postponed.set(gateKey, line);
      const delayMs = Math.min(MOST_POSTPONE_MS, POSTPONE_MS * Math.ceil(line / 8)) * (1 + Math.random());
      throw new DeliveryPostponed(Math.round(delayMs), () => this.gate.wait(gateKey));
    }
    try {
      await this.deliverNow(job);
    } finally {
      this.postponed.delete(gateKey);
      release();
    }
  }

  /**
   * Unless the task has already passed the job's state (a slow or retried delivery of a non-terminal
   * state that a later one overtook: dropped) or its endpoint is disabled (kept paused), one attempt.
   * A terminal state is never passed, so its delivery never waits on the task's record.
   */
  private async deliverNow(job: DeliveryJob): Promise<void> {
    const { deliveries, telemetry } = this.options;
    const status = job.status ?? statusInBody(job.body);
    // a replay, or a paused delivery its enabled endpoint sends, sends what was recorded, whatever the task's state now
    if (job.replay === undefined && job.resume === undefined && status !== undefined && !isTerminalStatus(status)) {
      const record = await this.options.store.getTask(job.taskId);
      if (record && isPassedStatus(status, record.status)) {
        this.options.logger.info({ taskId: job.taskId, eventId: job.eventId, status, current: record.status }, 'callback dropped: the task has moved past this state');
        telemetry.recordCallbackDelivery('dropped');
        await deliveries.superseded(job);
        return;
      }
    }
    const endpoints = deliveries.endpoints;
    const endpoint = endpoints?.of({ url: job.url, owner: await deliveries.ownerOf(job) });
    if (endpoints && endpoint && (await endpoints.disabled(endpoint))) {
      this.options.logger.info({ taskId: job.taskId, eventId: job.eventId }, 'callback paused: its endpoint is disabled');
      await deliveries.paused(job);
      return;
    }
    const at = clock().now();
    let outcome: boolean | undefined;
    try {
      await telemetry.callbackDelivery(job.trace, status, () => deliveries.attempt(job, () => this.deliverer.deliver(job)));
      outcome = true;
    } catch (error) {
      // a URL refused for good is the gateway's policy, not the receiver's failure
      if (!(error instanceof CallbackDeliveryError && !error.retryable)) outcome = false;
      throw error;
    } finally {
      // counted before a failure is retried: the attempt that disables the endpoint pauses the retry
      if (endpoints && endpoint && outcome !== undefined) await endpoints.outcome(endpoint, outcome, at);
    }
    // a paused delivery its enabled endpoint took: the next one follows
    if (endpoints && job.resume !== undefined) await endpoints.resumed(job);
  }
}

/** The status inside a delivery body, for jobs queued before DeliveryJob.status existed. */
function statusInBody(body: string): string | undefined {
  try {
    const status = (JSON.parse(body) as { status?: unknown }).status;
    return typeof status === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}
