// Image tasks waiting for an upstream slot in this process (docs/image-tasks.md "How many run at
// once"): at most `concurrency` run together, at most `perCaller` of them one caller's, and a freed
// slot goes to the callers in turn, so one tenant's burst of thousands never holds every slot nor
// makes another tenant's task wait behind all of it. Waiting is bounded too, in total and per caller.

export interface FairQueueLimits {
  concurrency: number;
  perCaller: number;
  maxQueued: number;
  maxQueuedPerCaller: number;
}

/** Why a new job cannot wait: the process's queue or the caller's share of it is full. */
export type Admission = 'ok' | 'full' | 'caller-full';

interface Lane {
  waiting: Array<QueuedJob>;
  running: number;
}

interface QueuedJob {
  id: string;
  run: () => Promise<void>;
}

export class FairQueue {
  private readonly lanes = new Map<string, Lane>();
  /** Callers with waiting jobs, in the order slots are offered to them. */
  private readonly turn: string[] = [];
  private running = 0;
  private queued = 0;

  constructor(private readonly limits: FairQueueLimits) {}

  /** Whether one more job of `owner` may wait now (asked before anything is charged). */
  admit(owner: string): Admission {
    if (this.queued >= this.limits.maxQueued) return 'full';
    if ((this.lanes.get(owner)?.waiting.length ?? 0) >= this.limits.maxQueuedPerCaller) return 'caller-full';
    return 'ok';
  }

  /** Queues `run` under `owner`; it starts when a slot is free and its caller's turn comes. Never throws. */
  push(owner: string, id: string, run: () => Promise<void>): void {
    let lane = this.lanes.get(owner);
    if (!lane) {
      lane = { waiting: [], running: 0 };
      this.lanes.set(owner, lane);
    }
    if (lane.waiting.length === 0) this.turn.push(owner);
    lane.waiting.push({ id, run });
    this.queued += 1;
    this.drain();
  }

  /** Takes a job that has not started out of the queue (a cancelled task); true when it was waiting. */
  remove(owner: string, id: string): boolean {
    const lane = this.lanes.get(owner);
    const index = lane?.waiting.findIndex((job) => job.id === id) ?? -1;
    if (!lane || index < 0) return false;
    lane.waiting.splice(index, 1);
    this.queued -= 1;
    if (lane.waiting.length === 0) this.leaveTurn(owner, lane);
    return true;
  }

  /** Jobs waiting and running, for the bench and the logs. */
  get size(): { queued: number; running: number } {
    return { queued: this.queued, running: this.running };
  }

  private drain(): void {
    // one pass over the callers in turn per free slot; a caller at its share keeps its place
    let skipped = 0;
    while (this.running < this.limits.concurrency && this.turn.length > 0 && skipped < this.turn.length) {
      const owner = this.turn.shift()!;
      const lane = this.lanes.get(owner)!;
      if (lane.running >= this.limits.perCaller) {
        this.turn.push(owner);
        skipped += 1;
        continue;
      }
      skipped = 0;
      const job = lane.waiting.shift()!;
      this.queued -= 1;
      if (lane.waiting.length > 0) this.turn.push(owner);
      this.start(owner, lane, job);
    }
  }

  private start(owner: string, lane: Lane, job: QueuedJob): void {
    lane.running += 1;
    this.running += 1;
    const done = (): void => {
      lane.running -= 1;
      this.running -= 1;
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(owner);
      this.drain();
    };
    // a job that throws synchronously or rejects still frees its slot; its own code logs the failure
    Promise.resolve()
      .then(job.run)
      .catch(() => undefined)
      .finally(done);
  }

  private leaveTurn(owner: string, lane: Lane): void {
    const at = this.turn.indexOf(owner);
    if (at >= 0) this.turn.splice(at, 1);
    if (lane.running === 0) this.lanes.delete(owner);
  }
}
