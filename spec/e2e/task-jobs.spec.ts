// The scheduler's jobs are owned by the task core (docs/architecture.md "Long-lived work"): each job goes
// to the kind of work that owns its id, and a job no kind owns is dropped with a warning, never retried
// for ever nor thrown into the process.
import { describe, expect, it, vi } from 'vitest';
import { type TaskRecord, createGatewayRouter, memoryScheduler, memoryTaskStore, staticKeys } from '../../lib/index.js';

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

  it('a job of a task whose record says no kind (written before records said one) is not followed, with one warning', async () => {
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const scheduler = memoryScheduler();
    const store = memoryTaskStore();
    const router = createGatewayRouter({
      verifyKey: staticKeys({ 'sk-task-jobs': { id: 'tenant-a' } }),
      resolveUpstream: () => null,
      store,
      callbacks: { scheduler },
      logger: { info: () => undefined, warn: (fields, message) => void warnings.push({ fields, message }), error: () => undefined },
    });
    try {
      const id = `task_${'A'.repeat(22)}`;
      const { kind: _kind, ...kindless } = {
        kind: 'video',
        id,
        owner: 'tenant-a',
        model: 'seedance',
        upstream: { provider: 'ark', baseURL: 'https://ark.example/api/v3', taskId: 'cgt-1' },
        createdAt: 1,
        status: 'queued',
        callback: { url: 'https://hooks.example.com/tasks', polls: 0, done: false },
        version: 1,
      } satisfies TaskRecord;
      await store.createTask(kindless as unknown as TaskRecord);
      await scheduler.schedulePoll(id, 0, `poll:${id}:0`);
      await vi.waitFor(() => expect(warnings.map((warning) => warning.message)).toContain('a task record of no known kind is not followed'), { timeout: 5_000, interval: 10 });
      expect(warnings.find((warning) => warning.message.startsWith('a task record'))?.fields).toEqual({ taskId: id, kind: 'undefined' });
      expect(await store.getTask(id)).toMatchObject({ status: 'queued', version: 1 });
    } finally {
      await router.close();
    }
  });
});
