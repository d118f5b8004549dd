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
  /** Admitted, not yet pushed: the submit is still being charged and written. */
  admitted: number;
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
  private admitted = 0;

  constructor(private readonly limits: FairQueueLimits) {}

  /**
   * Whether one more job of `owner` may wait now (asked before anything is charged). An admitted job
   * holds its place until `push` or `release`: a submit is charged and written between the two, and
   * concurrent submits must not all pass the check in that time.
   */
  admit(owner: string): Admission {
    const lane = this.lanes.get(owner);
    if (this.queued + this.admitted >= this.limits.maxQueued) return 'full';
    if ((lane?.waiting.length ?? 0) + (lane?.admitted ?? 0) >= this.limits.maxQueuedPerCaller) return 'caller-full';
    this.laneOf(owner).admitted += 1;
    this.admitted += 1;
    return 'ok';
  }

  /** Gives back the place of an admitted job that will not be pushed (its charge or its write failed). */
  release(owner: string): void {
    const lane = this.lanes.get(owner);
    if (!lane || lane.admitted === 0) return;
    lane.admitted -= 1;
    this.admitted -= 1;
    if (lane.admitted === 0 && lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(owner);
  }

  /** Queues `run` under `owner`, taking the place `admit` held; it starts when a slot is free and its caller's turn comes. Never throws. */
  push(owner: string, id: string, run: () => Promise<void>): void {
    const lane = this.laneOf(owner);
    if (lane.admitted > 0) {
      lane.admitted -= 1;
      this.admitted -= 1;
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
      if (lane.running === 0 && lane.waiting.length === 0 && lane.admitted === 0) this.lanes.delete(owner);
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
    if (lane.running === 0 && lane.admitted === 0) this.lanes.delete(owner);
  }

  private laneOf(owner: string): Lane {
    let lane = this.lanes.get(owner);
    if (!lane) {
      lane = { waiting: [], running: 0, admitted: 0 };
      this.lanes.set(owner, lane);
    }
    return lane;
  }
}
