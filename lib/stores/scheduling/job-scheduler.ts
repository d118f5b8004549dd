// Long-lived work behind one small interface (docs/architecture.md): following tasks (polls) and delivering
// callbacks (with retries). `memoryScheduler` runs both on unref()ed timers in this process;
// `bullmqScheduler` runs them as BullMQ jobs in Redis, shared by several gateway instances.
import type { TaskTraceContext } from '../../telemetry/task-links.js';
import { GatewayConfigError } from '../../errors/config-error.js';
import type { Logger } from '../../types.js';

/** One callback to deliver (contract §6): what a scheduler queues and hands back to JobHandlers.deliver. */
export interface DeliveryJob {
  /** Same for every attempt of one task state: `webhook-id`. */
  eventId: string;
  taskId: string;
  url: string;
  /** The JSON body, fixed when the state was observed. */
  body: string;
  /**
   * The task status in `body`: a delivery whose state the task has already passed is dropped when
   * it runs (task-state-order.ts). Absent on jobs queued by older versions; `body.status` is read then.
   */
  status?: string;
  /** The task's create span context: the delivery continues that trace (`traceparent`). */
  trace?: TaskTraceContext;
  /**
   * Set on a replay of a recorded delivery (docs/video-tasks-and-callbacks.md "Delivery log"): a token
   * of its own, so the replay is queued beside the delivery it repeats; sent whatever the task's state.
   */
  replay?: string;
  /**
   * Set when an enabled endpoint sends a delivery its disablement paused (docs/video-tasks-and-callbacks.md
   * "Endpoints that heal"): a token of its own, as a replay's; sent whatever the task's state, and the
   * endpoint's next paused delivery follows once it ends. Not marked as a replay: it was never sent.
   */
  resume?: string;
  /** `Caller.id` of the task's owner: its endpoint is this tenant's. Absent on jobs queued by older versions. */
  owner?: string;
}

/** The scheduler's key of a delivery job: its event id, and a replay's or a resumed delivery's own token. */
export function deliveryKey(job: Pick<DeliveryJob, 'eventId' | 'replay' | 'resume'>): string {
  if (job.resume !== undefined) return `deliver:${job.eventId}:resume:${job.resume}`;
  return job.replay === undefined ? `deliver:${job.eventId}` : `deliver:${job.eventId}:replay:${job.replay}`;
}

/**
 * Thrown by `JobHandlers.deliver` when a delivery cannot start yet: its endpoint already has the most
 * attempts in flight it may (`deliveries.perEndpointInFlight`). The scheduler frees the worker and runs
 * the job again, without counting an attempt: once `wait()` resolves (a slot of that endpoint freed in
 * this process), or after `delayMs` where the job may run in another process. A scheduler that does not
 * know it retries it as any failure.
 */
export class DeliveryPostponed extends Error {
  constructor(
    /** When to try again, ms. */
    readonly delayMs: number,
    /** Resolves when the endpoint may have a free slot in this process. */
    readonly wait: () => Promise<void>,
  ) {
    super('delivery postponed: its endpoint has the most attempts in flight it may');
    this.name = 'DeliveryPostponed';
  }
}

export interface JobHandlers {
  /**
   * Polls one task; answers when to poll next (and that poll's key), or undefined to stop following it.
   * Throws when the poll could not be made (store, resolver or upstream unavailable; the handler has
   * logged it): the scheduler runs the same poll again after `RetryPolicy.delayMs`, up to
   * `RetryPolicy.pollAttempts` attempts, so an outage delays following instead of ending it.
   */
  poll(taskId: string): Promise<NextPoll | undefined>;
  /** Called once a poll is given up after its last attempt: following that task has ended. */
  pollFailed(taskId: string, error: unknown, attempts: number): void;
  /** One delivery attempt; throws to be retried. */
  deliver(job: DeliveryJob): Promise<void>;
  /** Whether a failed delivery may be retried (false: give up now). */
  isRetryable(error: unknown): boolean;
  /** Called once a delivery is given up after its last attempt. */
  deliveryFailed(job: DeliveryJob, error: unknown, attempts: number): void;
  /**
   * The gateway's logger (silent when the host gave none), for the scheduler's own trouble: a
   * scheduler on Redis logs connection errors here, a few lines per outage, never one per retry.
   */
  logger?: Logger;
}

export interface NextPoll {
  delayMs: number;
  /** Derived from the task's state, so a job that runs twice schedules its successor once. */
  key: string;
}

export interface RetryPolicy {
  /** Attempts of one delivery. */
  maxAttempts: number;
  /** Attempts of one poll that keeps failing (see JobHandlers.poll). */
  pollAttempts: number;
  /** Delay before retry n (1-based), jitter included; bounded. Polls and deliveries share it. */
  delayMs(retry: number): number;
}

export interface JobScheduler {
  /** Starts running jobs with these handlers; called once by the router. */
  start(handlers: JobHandlers, retry: RetryPolicy): Promise<void>;
  /** Polls `taskId` after `delayMs`; `key` names the poll so two instances schedule it only once. */
  schedulePoll(taskId: string, delayMs: number, key: string): Promise<void>;
  /** Delivers `job` (at least once); a job with an eventId already queued is not queued again. */
  scheduleDelivery(job: DeliveryJob): Promise<void>;
  /** Stops timers or workers; pending work stays in Redis for the BullMQ scheduler. */
  close(): Promise<void>;
}

export interface MemorySchedulerOptions {
  /**
   * Delivery attempts run at once; the others wait their turn in order, so a bulk replay of thousands
   * of deliveries queues instead of opening thousands of requests. Default 32.
   * @example memoryScheduler({ deliveryConcurrency: 64 })
   */
  deliveryConcurrency?: number;
}

/** In-process scheduling: for one instance; a restart forgets pending polls and deliveries. */
export function memoryScheduler(options: MemorySchedulerOptions = {}): JobScheduler {
  const concurrency = options.deliveryConcurrency ?? 32;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new GatewayConfigError(
      'scheduler_concurrency',
      `memoryScheduler deliveryConcurrency must be a whole number >= 1, got ${String(concurrency)}.`,
      'memoryScheduler({ deliveryConcurrency: 32 })',
    );
  }
  const timers = new Set<NodeJS.Timeout>();
  // attempts past the concurrency wait here, first come first served
  const waiting: Array<() => void> = [];
  let running = 0;
  const inTurn = async (run: () => Promise<void>): Promise<void> => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      await run();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
  const keys = new Set<string>();
  let handlers: JobHandlers | undefined;
  let retry: RetryPolicy | undefined;
  let closed = false;

  const later = (delayMs: number, run: () => Promise<void>): void => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      // a throwing handler (a host logger, say) must not become an unhandled rejection
      run().catch(() => undefined);
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };

  const attempt = async (job: DeliveryJob, made: number): Promise<void> => {
    try {
      await inTurn(() => handlers!.deliver(job));
      keys.delete(deliveryKey(job));
    } catch (error) {
      // its endpoint is busy: the worker is free for others, and the job waits outside the turn, uncounted
      if (error instanceof DeliveryPostponed) {
        // as in `later`: a throwing handler (a host logger, say) must not become an unhandled rejection
        if (!closed)
          error
            .wait()
            .then(() => (closed ? undefined : attempt(job, made)))
            .catch(() => undefined);
        return;
      }
      if (made < retry!.maxAttempts && handlers!.isRetryable(error)) later(retry!.delayMs(made), () => attempt(job, made + 1));
      else {
        keys.delete(deliveryKey(job));
        handlers!.deliveryFailed(job, error, made);
      }
    }
  };

  // the key stays taken while the poll is retried, so the same poll is never running twice
  const poll = async (taskId: string, key: string, made: number): Promise<void> => {
    let next: NextPoll | undefined;
    try {
      next = await handlers!.poll(taskId);
    } catch (error) {
      if (made < retry!.pollAttempts) return later(retry!.delayMs(made), () => poll(taskId, key, made + 1));
      keys.delete(key);
      return handlers!.pollFailed(taskId, error, made);
    }
    keys.delete(key);
    if (next !== undefined) await schedulePoll(taskId, next.delayMs, next.key);
  };

  const schedulePoll = async (taskId: string, delayMs: number, key: string): Promise<void> => {
    if (keys.has(key)) return;
    keys.add(key);
    later(delayMs, () => poll(taskId, key, 1));
  };

  return {
    async start(given, policy) {
      handlers = given;
      retry = policy;
    },
    schedulePoll,
    async scheduleDelivery(job) {
      const key = deliveryKey(job);
      if (keys.has(key)) return;
      keys.add(key);
      later(0, () => attempt(job, 1));
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
