// The scheduler's work (docs/architecture.md "Long-lived work"), owned here and started once per router:
// each scheduled job goes to the kind of work that owns its id (the task service for every task, which
// hands a job to the executor of the task's kind; kept answers; lapsed keys), and callback deliveries
// to the one delivery core. A new kind of work is one more entry in the list the router starts it
// with. All run detached from whichever request armed the scheduler's timer.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { messageOf } from './background-work.js';
import { CallbackDeliveryError } from './callback-delivery.js';
import { DeliveryJobs } from './delivery-jobs.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import { equalJitterBackoff } from './retry-backoff.js';

/** One kind of work with jobs on the scheduler's poll queue: the ids it owns, and what a job of one does. */
export interface TaskWatches {
  /** True for the task ids this kind owns. */
  owns(taskId: string): boolean;
  watch(taskId: string): Promise<NextPoll | undefined>;
}

/**
 * Starts `options.scheduler` with every kind of work's jobs and the callback deliveries. A job no kind
 * owns (one left by an older version, say) is dropped with a warning rather than retried forever.
 */
export async function startTaskJobs(options: ResolvedOptions, http: UpstreamHttp, kinds: readonly TaskWatches[]): Promise<void> {
  const { callbacks, logger, telemetry } = options;
  const deliveries = new DeliveryJobs(options, http);
  const watch = (taskId: string): Promise<NextPoll | undefined> => {
    const kind = kinds.find((candidate) => candidate.owns(taskId));
    if (kind) return kind.watch(taskId);
    logger.warn({ taskId }, 'a scheduled job no kind of work owns was dropped');
    return Promise.resolve(undefined);
  };
  await options.scheduler.start(
    {
      // background work: not in the context of whichever request armed the scheduler's timer
      poll: (taskId) => telemetry.detached(() => watch(taskId)),
      pollFailed: (taskId, error, attempts) => logger.error({ taskId, attempts, error: messageOf(error) }, 'task poll given up'),
      deliver: (job) => telemetry.detached(() => deliveries.deliver(job)),
      isRetryable: (error) => !(error instanceof CallbackDeliveryError) || error.retryable,
      deliveryFailed: (job, error, attempts) => {
        logger.error({ taskId: job.taskId, eventId: job.eventId, attempts, error: messageOf(error) }, 'callback delivery given up');
        // a dead letter in the delivery log, for a replay; a paused delivery its enabled endpoint was
        // sending is followed by the next (deliveries/endpoints.ts)
        void options.deliveries.failed(job).then(() => options.deliveries.endpoints?.resumed(job));
      },
      logger,
    },
    {
      maxAttempts: callbacks.maxAttempts,
      // a poll that cannot be made (store, resolver or Ark down) is retried for about as long as a
      // task is followed at all (maxFollowMs at the longest backoff): an outage shorter than that
      // only delays the callbacks; a longer one ends following with an error in the log
      pollAttempts: Math.max(callbacks.maxAttempts, Math.ceil(callbacks.maxFollowMs / callbacks.retryMaxMs)),
      // exponential backoff with "equal jitter" (retry-backoff.ts)
      delayMs: (retry) => equalJitterBackoff(retry, { baseMs: callbacks.retryBaseMs, maxMs: callbacks.retryMaxMs }),
    },
  );
  // the operator's sign that polls and callback deliveries run (a failure to start is logged by the router)
  logger.info({}, 'task scheduler started');
}
