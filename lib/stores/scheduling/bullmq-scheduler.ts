// Polls and callback deliveries as BullMQ jobs in Redis, shared by every gateway instance on that
// Redis: delayed jobs for the polling schedule, attempts with jittered exponential backoff for
// deliveries and for polls that fail (a Redis or resolver outage delays following, never ends it),
// and BullMQ's stalled-job check to hand the job of a dead worker to another instance.
// Job ids come from the task state (poll keys, event ids), so a job added twice is queued once.
import type { ConnectionOptions, Job, JobsOptions, Queue, Worker } from 'bullmq';
import { GatewayConfigError } from '../../errors/config-error.js';
import { type DeliveryJob, DeliveryPostponed, type JobHandlers, type JobScheduler, type RetryPolicy, deliveryKey } from './job-scheduler.js';
import { repeatLimiter } from './repeat-limiter.js';
import type { Logger } from '../../types.js';

/**
 * The host's ioredis client as the scheduler uses it: only `duplicate()`, whose copies go to BullMQ.
 * Structural, so the published declarations do not import ioredis (an optional peer).
 */
export interface BullmqConnection {
  duplicate(override?: { maxRetriesPerRequest?: number | null }): { disconnect(): void };
}

export interface BullmqSchedulerOptions {
  /** The host's ioredis client; the scheduler duplicates it for BullMQ and never closes the original. */
  connection: BullmqConnection;
  /** Default 'gateway-tasks'. Instances that share work must share the name (and the Redis). */
  queueName?: string;
  /** BullMQ key prefix. Default 'bull'. */
  prefix?: string;
  /** Jobs one instance runs at once. Default 8. */
  concurrency?: number;
  /** How long a worker holds a job before it counts as dead and another instance takes it, ms. Default 30 s. */
  lockDurationMs?: number;
  /** How often workers look for such jobs, ms. Default 30 s. */
  stalledIntervalMs?: number;
  /** How long finished jobs (and so their ids, for deduplication) are kept, seconds. Default 1 day. */
  keepFinishedSeconds?: number;
}

type JobData = { taskId: string } | DeliveryJob;

// BullMQ refuses ':' in custom job ids
const jobId = (key: string): string => key.replace(/:/g, '_');

const REPEAT_WINDOW_MS = 60_000;

export function bullmqScheduler(options: BullmqSchedulerOptions): JobScheduler {
  if (!options?.connection || typeof options.connection.duplicate !== 'function') {
    throw new GatewayConfigError('bullmq_connection', 'bullmqScheduler needs an ioredis client as `connection`.', 'bullmqScheduler({ connection: new Redis(process.env.REDIS_URL) })');
  }
  const queueName = options.queueName ?? 'gateway-tasks';
  const keep = { age: options.keepFinishedSeconds ?? 86_400 };
  // BullMQ's blocking commands need a connection that retries forever (maxRetriesPerRequest: null)
  // a duplicate of an ioredis client is an ioredis client, which BullMQ takes as its connection
  const queueConnection = options.connection.duplicate({ maxRetriesPerRequest: null }) as ConnectionOptions & { disconnect(): void };
  const workerConnection = options.connection.duplicate({ maxRetriesPerRequest: null }) as ConnectionOptions & { disconnect(): void };
  let queue: Queue<JobData> | undefined;
  let worker: Worker<JobData> | undefined;
  let retry: RetryPolicy | undefined;
  let ready: Promise<Queue<JobData>> | undefined;
  let logger: Logger | undefined;
  // one line per kind of error a minute: BullMQ emits one per reconnect attempt while Redis is down
  const quiet = repeatLimiter(REPEAT_WINDOW_MS);
  // an unheard 'error' event would crash the host; a heard one is the operator's only sign of the outage
  const onError = (source: 'queue' | 'worker') => (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    const repeats = quiet.admit(`${source}: ${message}`);
    if (repeats === undefined) return;
    // warn, not error: BullMQ reconnects by itself; a poll that is given up for good is logged as an error
    logger?.warn({ queueName, source, error: message, ...(repeats > 0 ? { repeats } : {}) }, 'the task scheduler cannot reach Redis; BullMQ keeps retrying');
  };

  // polls that fail are retried with the shared jittered, bounded backoff (job-scheduler.ts)
  const pollOptions = (key: string, delayMs: number): JobsOptions => ({
    jobId: jobId(key),
    delay: delayMs,
    attempts: retry?.pollAttempts ?? 1,
    backoff: { type: 'custom' },
    removeOnComplete: keep,
    removeOnFail: keep,
  });

  const openQueue = (): Promise<Queue<JobData>> => {
    ready ??= import('bullmq').then(({ Queue }) => {
      queue = new Queue<JobData>(queueName, { connection: queueConnection, prefix: options.prefix });
      queue.on('error', onError('queue'));
      return queue;
    });
    return ready;
  };

  return {
    async start(handlers: JobHandlers, policy: RetryPolicy) {
      retry = policy;
      logger = handlers.logger;
      const { Worker, UnrecoverableError, DelayedError } = await import('bullmq');
      const jobs = await openQueue();
      worker = new Worker<JobData>(
        queueName,
        async (job: Job<JobData>, token?: string) => {
          if (job.name === 'poll') {
            // a throw (store, resolver or upstream unavailable) makes BullMQ run this poll again after the backoff
            const next = await handlers.poll(job.data.taskId);
            if (next) await jobs.add('poll', job.data, pollOptions(next.key, next.delayMs));
            return;
          }
          try {
            await handlers.deliver(job.data as DeliveryJob);
          } catch (error) {
            // its endpoint is busy here: the job goes back to wait, the worker takes another, no attempt counted
            if (error instanceof DeliveryPostponed) {
              await job.moveToDelayed(Date.now() + error.delayMs, token);
              throw new DelayedError();
            }
            // a URL that is no longer allowed will not become allowed by retrying
            if (!handlers.isRetryable(error)) throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
            throw error;
          }
        },
        {
          connection: workerConnection,
          prefix: options.prefix,
          concurrency: options.concurrency ?? 8,
          lockDuration: options.lockDurationMs ?? 30_000,
          stalledInterval: options.stalledIntervalMs ?? 30_000,
          settings: { backoffStrategy: (attemptsMade: number) => retry!.delayMs(attemptsMade) },
        },
      );
      worker.on('failed', (job, error) => {
        if (!job) return;
        const last = job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError;
        if (!last) return;
        if (job.name === 'poll') handlers.pollFailed(job.data.taskId, error, job.attemptsMade);
        else handlers.deliveryFailed(job.data as DeliveryJob, error, job.attemptsMade);
      });
      worker.on('error', onError('worker'));
    },
    async schedulePoll(taskId, delayMs, key) {
      const jobs = await openQueue();
      await jobs.add('poll', { taskId }, pollOptions(key, delayMs));
    },
    async scheduleDelivery(job) {
      const jobs = await openQueue();
      await jobs.add('deliver', job, {
        jobId: jobId(deliveryKey(job)),
        attempts: retry?.maxAttempts ?? 8,
        backoff: { type: 'custom' },
        removeOnComplete: keep,
        removeOnFail: { age: keep.age * 7 },
      });
    },
    async close() {
      await worker?.close();
      await queue?.close();
      queueConnection.disconnect();
      workerConnection.disconnect();
    },
  };
}
