// The scheduler's work for every kind of task (docs/architecture.md "long-lived work"): polls of video
// tasks with a callback, the watches of image tasks (and of the other work with an id, TaskWatches),
// and callback deliveries, started once per router with their handlers and retry policy. All run
// detached from whichever request armed the scheduler's timer.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { messageOf } from './background-work.js';
import { CallbackDeliveryError } from './callback-delivery.js';
import type { DeliveryJobs } from './delivery-jobs.js';
import { equalJitterBackoff } from './retry-backoff.js';

/** The polls of video tasks with a callback (video-tasks/video-task-follower.ts): the scheduler's polls no watch owns. */
export interface TaskPolls {
  poll(taskId: string): Promise<NextPoll | undefined>;
}

/** Scheduled jobs of another kind of task that share the scheduler's poll queue (image tasks' watches). */
export interface TaskWatches {
  /** True for the task ids this kind owns. */
  owns(taskId: string): boolean;
  watch(taskId: string): Promise<NextPoll | undefined>;
}

/** Several kinds of scheduled jobs as one: each job goes to the kind that owns its id. */
export function allWatches(...kinds: TaskWatches[]): TaskWatches {
  const ownerOf = (taskId: string): TaskWatches | undefined => kinds.find((kind) => kind.owns(taskId));
  return {
    owns: (taskId) => ownerOf(taskId) !== undefined,
    watch: (taskId) => ownerOf(taskId)!.watch(taskId),
  };
}

/** Starts `options.scheduler` with the follower's polls, the delivery jobs and, when given, the watches of image tasks. */
export async function startTaskJobs(options: ResolvedOptions, follower: TaskPolls, deliveries: DeliveryJobs, watches?: TaskWatches): Promise<void> {
  const { callbacks, logger, telemetry } = options;
  await options.scheduler.start(
    {
      // background work: not in the context of whichever request armed the scheduler's timer
      poll: (taskId) => telemetry.detached(() => (watches?.owns(taskId) ? watches.watch(taskId) : follower.poll(taskId))),
      pollFailed: (taskId, error, attempts) => logger.error({ taskId, attempts, error: messageOf(error) }, 'task poll given up'),
      deliver: (job) => telemetry.detached(() => deliveries.deliver(job)),
      isRetryable: (error) => !(error instanceof CallbackDeliveryError) || error.retryable,
      deliveryFailed: (job, error, attempts) => logger.error({ taskId: job.taskId, eventId: job.eventId, attempts, error: messageOf(error) }, 'callback delivery given up'),
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
