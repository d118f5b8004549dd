// memoryScheduler's postponed deliveries (docs/video-tasks-and-callbacks.md "Endpoints that heal"): a
// delivery postponed because its endpoint was busy, then given up, calls `deliveryFailed` like any
// other; a handler that throws there (a host logger, say) is no unhandled rejection, which would end
// the process under Node's defaults.
import { describe, expect, it } from 'vitest';
import { DeliveryPostponed, type JobHandlers, memoryScheduler } from '../../lib/stores/scheduling/job-scheduler.js';

describe('a postponed delivery given up', () => {
  it.each([{ postponed: false }, { postponed: true }])('postponed first: $postponed; a throwing deliveryFailed is no unhandled rejection', async ({ postponed }) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    const scheduler = memoryScheduler();
    let attempts = 0;
    let givenUp = 0;
    const handlers: JobHandlers = {
      poll: () => Promise.resolve(undefined),
      pollFailed: () => undefined,
      deliver: () => {
        attempts += 1;
        if (postponed && attempts === 1) return Promise.reject(new DeliveryPostponed(1_000, () => Promise.resolve()));
        return Promise.reject(new Error('the receiver answered 500'));
      },
      isRetryable: () => false,
      deliveryFailed: () => {
        givenUp += 1;
        throw new Error('the host logger threw');
      },
    };
    try {
      await scheduler.start(handlers, { maxAttempts: 1, pollAttempts: 1, delayMs: () => 1 });
      await scheduler.scheduleDelivery({ eventId: `evt-${String(postponed)}`, taskId: 'task-1', url: 'https://hooks.example.com/a', body: '{}' });
      await expect.poll(() => givenUp).toBe(1);
      // one turn of the event loop for a rejection to be reported as unhandled
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(attempts).toBe(postponed ? 2 : 1);
    } finally {
      await scheduler.close();
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
