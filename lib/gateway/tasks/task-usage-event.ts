// A task's one terminal usage event (docs/tenancy-and-billing.md "The books"), for video and image
// tasks alike: emitted once per task, by the writer whose compare-and-set recorded `usageReported`.
// The event is built only when the host listens, and a listener that throws is logged, never the
// task's failure.
import type { UsageEvent } from '../../types.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { messageOf } from './background-work.js';

/** Emits the event `build` makes, when the host has an `onUsage` listener. */
export function emitTaskUsage(options: Pick<ResolvedOptions, 'onUsage' | 'logger'>, build: () => UsageEvent): void {
  const { onUsage } = options;
  if (!onUsage) return;
  try {
    onUsage(build());
  } catch (thrown) {
    options.logger.error({ error: messageOf(thrown) }, 'onUsage threw');
  }
}
