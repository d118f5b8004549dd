// Hands one state of a task to callback delivery (contract §6.2), for video and image tasks alike: the
// body a query returns, queued under the state's event id (task-keys.ts), so a state handed over twice
// is queued once; the delivery job (delivery-jobs.ts) sends it, signed, at least once.
import type { TaskRecord } from '../../stores/tasks/task-store.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { callbackJob } from './task-keys.js';

/** Queues the delivery of `status` (its body `body`) to the task's callback URL; nothing when it has none. */
export async function handOverState(options: ResolvedOptions, record: Pick<TaskRecord, 'id' | 'owner' | 'trace' | 'callback'>, status: string, body: unknown): Promise<void> {
  if (!record.callback) return;
  const job = callbackJob(record, record.callback.url, status, body);
  // recorded before it is queued, so the log has it before any attempt (deliveries/delivery-log.ts);
  // to a disabled endpoint it is recorded paused and not queued (deliveries/endpoints.ts)
  if (await options.deliveries.opened(job, record.owner)) return;
  await options.scheduler.scheduleDelivery(job);
}
