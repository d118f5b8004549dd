// Queries an image task (docs/image-tasks.md) as a client would, until it leaves queued and running:
// the task as last answered, for the spec to assert on its status and result.
import request from 'supertest';
import { expect } from 'vitest';

export async function imageTaskEnded(app: Parameters<typeof request>[0], id: string, key: string): Promise<Record<string, unknown>> {
  let task: Record<string, unknown> = {};
  await expect
    .poll(
      async () => {
        task = (await request(app).get(`/v1/images/tasks/${id}`).set('Authorization', `Bearer ${key}`)).body as Record<string, unknown>;
        return task.status === 'queued' || task.status === 'running';
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(false);
  return task;
}
