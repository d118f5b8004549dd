// Long-lived work behind one small interface (design.md): following tasks (polls) and delivering
// callbacks (with retries). `memoryScheduler` runs both on unref()ed timers in this process;
// `bullmqScheduler` runs them as BullMQ jobs in Redis, shared by several gateway instances.
import type { DeliveryJob } from './callback-delivery.js';

export interface JobHandlers {
  /** Polls one task; answers when to poll next (and that poll's key), or undefined to stop following it. */
  poll(taskId: string): Promise<NextPoll | undefined>;
  /** One delivery attempt; throws to be retried. */
  deliver(job: DeliveryJob): Promise<void>;
  /** Whether a failed delivery may be retried (false: give up now). */
  isRetryable(error: unknown): boolean;
  /** Called once a delivery is given up after its last attempt. */
  deliveryFailed(job: DeliveryJob, error: unknown, attempts: number): void;
}

export interface NextPoll {
  delayMs: number;
  /** Derived from the task's state, so a job that runs twice schedules its successor once. */
  key: string;
}

export interface RetryPolicy {
  maxAttempts: number;
  /** Delay before retry n (1-based), jitter included. */
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

/** In-process scheduling: for one instance; a restart forgets pending polls and deliveries. */
export function memoryScheduler(): JobScheduler {
  const timers = new Set<NodeJS.Timeout>();
  const keys = new Set<string>();
  let handlers: JobHandlers | undefined;
  let retry: RetryPolicy | undefined;
  let closed = false;

  const later = (delayMs: number, run: () => Promise<void>): void => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      void run();
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };

  const attempt = async (job: DeliveryJob, made: number): Promise<void> => {
    try {
      await handlers!.deliver(job);
      keys.delete(`deliver:${job.eventId}`);
    } catch (error) {
      if (made < retry!.maxAttempts && handlers!.isRetryable(error)) later(retry!.delayMs(made), () => attempt(job, made + 1));
      else {
        keys.delete(`deliver:${job.eventId}`);
        handlers!.deliveryFailed(job, error, made);
      }
    }
  };

  return {
    async start(given, policy) {
      handlers = given;
      retry = policy;
    },
    async schedulePoll(taskId, delayMs, key) {
      if (keys.has(key)) return;
      keys.add(key);
      later(delayMs, async () => {
        keys.delete(key);
        const next = await handlers!.poll(taskId).catch(() => undefined);
        if (next !== undefined) await this.schedulePoll(taskId, next.delayMs, next.key);
      });
    },
    async scheduleDelivery(job) {
      const key = `deliver:${job.eventId}`;
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
