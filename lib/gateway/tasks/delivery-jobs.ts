// A callback delivery job when the scheduler runs it (contract §6): dropped when the task has moved
// past the job's state (a slow or retried delivery a later one overtook), otherwise one attempt of
// callback-delivery.ts inside the task's trace. Whichever scheduler runs it, the rule is the same.
import type { DeliveryJob } from '../../stores/scheduling/job-scheduler.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { type CallbackDeliverer, createCallbackDeliverer } from './callback-delivery.js';
import { isPassedStatus, isTerminalStatus } from './task-state-order.js';

export class DeliveryJobs {
  private readonly deliverer: CallbackDeliverer;

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
  }

  /**
   * One delivery attempt, unless the task has already passed the job's state (a slow or retried
   * delivery of a non-terminal state that a later one overtook): such a job is dropped, whichever
   * scheduler runs it. A terminal state is never passed, so its delivery never waits on the store.
   */
  async deliver(job: DeliveryJob): Promise<void> {
    const status = job.status ?? statusInBody(job.body);
    // a replay sends what was recorded, whatever the task's state now
    if (job.replay === undefined && status !== undefined && !isTerminalStatus(status)) {
      const record = await this.options.store.getTask(job.taskId);
      if (record && isPassedStatus(status, record.status)) {
        this.options.logger.info({ taskId: job.taskId, eventId: job.eventId, status, current: record.status }, 'callback dropped: the task has moved past this state');
        this.options.telemetry.recordCallbackDelivery('dropped');
        await this.options.deliveries.superseded(job);
        return;
      }
    }
    await this.options.telemetry.callbackDelivery(job.trace, status, () => this.options.deliveries.attempt(job, () => this.deliverer.deliver(job)));
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
