// Renews the leases of the work this instance holds (lease-terms.ts): one timer for all of it, running
// only while something is held, unref()ed so it never keeps a process alive. A renewal that fails is
// logged and tried again at the next tick: the lease lasts three ticks.
import type { Logger } from '../../types.js';

// renewals of one tick run this many at a time: a long queue of held work is renewed without a burst
const RENEW_BATCH = 16;

export class LeaseRenewer {
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(
    private readonly everyMs: number,
    private readonly renew: (id: string) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  hold(id: string): void {
    this.held.add(id);
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  release(id: string): void {
    this.held.delete(id);
    if (this.held.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    // a tick slower than the interval (a slow store) is not overlapped by the next one
    if (this.busy) return;
    this.busy = true;
    try {
      const ids = [...this.held];
      for (let start = 0; start < ids.length; start += RENEW_BATCH) {
        await Promise.all(
          ids
            .slice(start, start + RENEW_BATCH)
            .map((id) => this.renew(id).catch((error: unknown) => this.logger.warn({ taskId: id, error: error instanceof Error ? error.message : String(error) }, 'lease not renewed'))),
        );
      }
    } finally {
      this.busy = false;
    }
  }
}
