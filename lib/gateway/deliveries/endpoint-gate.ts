// At most `deliveries.perEndpointInFlight` attempts to one endpoint at once in this process
// (docs/video-tasks-and-callbacks.md "Endpoints that heal"), so an endpoint that hangs for its whole
// timeout holds that many of the scheduler's workers, never all of them: a delivery past the bound is
// postponed (DeliveryPostponed), which frees its worker, and waits for a slot of its own endpoint.

export class EndpointGate {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit: number) {}

  /** A slot of `endpoint`: its release, or undefined when the endpoint has `limit` attempts running. */
  enter(endpoint: string): (() => void) | undefined {
    const running = this.running.get(endpoint) ?? 0;
    if (running >= this.limit) return undefined;
    this.running.set(endpoint, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(endpoint) ?? 1) - 1;
      if (left > 0) this.running.set(endpoint, left);
      else this.running.delete(endpoint);
      // one waiter per freed slot, first come first served
      const queue = this.waiting.get(endpoint);
      const next = queue?.shift();
      if (queue?.length === 0) this.waiting.delete(endpoint);
      next?.();
    };
  }

  /** Resolves when `endpoint` may have a free slot: at once when it has one now. */
  wait(endpoint: string): Promise<void> {
    if ((this.running.get(endpoint) ?? 0) < this.limit) return Promise.resolve();
    return new Promise((resolve) => {
      const queue = this.waiting.get(endpoint) ?? [];
      queue.push(resolve);
      this.waiting.set(endpoint, queue);
    });
  }
}
