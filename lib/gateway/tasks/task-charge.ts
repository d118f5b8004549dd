// What a task's create or submit charged, as the task record keeps it (docs/tenancy-and-billing.md "The
// books"): one shape for every kind of task, so the terminal settlement of any kind reads the same
// fields, and another instance can settle a charge this one took.
import type { TaskCharge } from '../../stores/tasks/task-store.js';
import type { QuotaCharge } from '../tenancy/quotas.js';

/** The record's charge of `charge`, for the `images` or `videoSeconds` it counted; undefined when nothing was taken. */
export function taskChargeOf(charge: QuotaCharge, amounts: { images?: number; videoSeconds?: number }): TaskCharge | undefined {
  if (charge.taken.length === 0) return undefined;
  const { windowEnds } = charge;
  const ends = {
    ...(windowEnds.images !== undefined ? { images: windowEnds.images } : {}),
    ...(windowEnds.videoSeconds !== undefined ? { videoSeconds: windowEnds.videoSeconds } : {}),
    ...(windowEnds.videoTasks !== undefined ? { videoTasks: windowEnds.videoTasks } : {}),
    ...(windowEnds.budget !== undefined ? { budget: windowEnds.budget } : {}),
  };
  return {
    ...(amounts.images !== undefined ? { images: charge.taken.includes('images') ? amounts.images : 0 } : {}),
    ...(amounts.videoSeconds !== undefined ? { videoSeconds: charge.taken.includes('videoSeconds') ? amounts.videoSeconds : 0, slot: charge.taken.includes('videoTasks') } : {}),
    ...(charge.budget !== undefined ? { budget: charge.budget } : {}),
    ...(Object.keys(ends).length > 0 ? { windowEnds: ends } : {}),
  };
}
