// The scheduler's jobs are owned by the task core (docs/architecture.md "Long-lived work"): each job goes
// to the kind of work that owns its id, and a job no kind owns is dropped with a warning, never retried
// for ever nor thrown into the process.
import { describe, expect, it, vi } from 'vitest';
import { createGatewayRouter, memoryScheduler, staticKeys } from '../../lib/index.js';

describe('the task core owns the scheduler', () => {
  it('a job of an id no kind of work owns is dropped with one warning', async () => {
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const scheduler = memoryScheduler();
    const router = createGatewayRouter({
      verifyKey: staticKeys({ 'sk-task-jobs': { id: 'tenant-a' } }),
      resolveUpstream: () => null,
      callbacks: { scheduler },
      logger: { info: () => undefined, warn: (fields, message) => void warnings.push({ fields, message }), error: () => undefined },
    });
    try {
      await scheduler.schedulePoll('nobody_0123456789', 0, 'nobody:0');
      await vi.waitFor(() => expect(warnings.map((warning) => warning.message)).toContain('a scheduled job no kind of work owns was dropped'), { timeout: 5_000, interval: 10 });
      expect(warnings.find((warning) => warning.message.startsWith('a scheduled job'))?.fields).toEqual({ taskId: 'nobody_0123456789' });
    } finally {
      await router.close();
    }
  });
});
