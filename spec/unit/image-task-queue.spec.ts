// The pieces of asynchronous image tasks that are pure: the fair queue (slots offered to callers in
// turn, a per-caller share, bounded waiting, a cancelled job taken out) and the Prefer header (RFC 7240).
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../lib/gateway/image-tasks/fair-queue.js';
import { preferenceOf } from '../../lib/express/prefer-header.js';

/** Pushes jobs `owner:id` that never finish by themselves; returns the start order and a way to finish one. */
function queueOf(limits: { concurrency: number; perCaller: number; maxQueued?: number; maxQueuedPerCaller?: number }) {
  const queue = new FairQueue({ maxQueued: 1000, maxQueuedPerCaller: 1000, ...limits });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const push = (...jobs: string[]) => {
    for (const job of jobs) {
      const [owner] = job.split(':');
      queue.push(owner!, job, () => {
        started.push(job);
        return new Promise<void>((resolve) => finishers.set(job, resolve));
      });
    }
  };
  const finish = async (job: string) => {
    finishers.get(job)!();
    // the freed slot is handed on after the job's promise settles
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { queue, started, push, finish };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('FairQueue', () => {
  it.each([
    { name: 'up to the concurrency, in arrival order for one caller', concurrency: 2, perCaller: 2, jobs: ['a:1', 'a:2', 'a:3'], started: ['a:1', 'a:2'] },
    { name: "one caller's share leaves room for another", concurrency: 3, perCaller: 2, jobs: ['a:1', 'a:2', 'a:3', 'b:1'], started: ['a:1', 'a:2', 'b:1'] },
    { name: 'callers take slots in turn', concurrency: 4, perCaller: 4, jobs: ['a:1', 'a:2', 'a:3', 'b:1', 'b:2'], started: ['a:1', 'a:2', 'a:3', 'b:1'] },
  ])('$name', async ({ concurrency, perCaller, jobs, started }) => {
    const q = queueOf({ concurrency, perCaller });
    q.push(...jobs);
    await tick();
    expect(q.started).toEqual(started);
  });

  it('a freed slot goes to the next caller in turn, not back to the busiest one', async () => {
    const q = queueOf({ concurrency: 1, perCaller: 1 });
    q.push('a:1', 'a:2', 'a:3', 'b:1');
    await tick();
    await q.finish('a:1');
    await q.finish(q.started.at(-1)!);
    await tick();
    expect(q.started).toEqual(['a:1', 'a:2', 'b:1']);
  });

  it.each([
    { name: 'the process queue full', maxQueued: 2, maxQueuedPerCaller: 10, owner: 'b', admission: 'full' },
    { name: "the caller's share full", maxQueued: 10, maxQueuedPerCaller: 2, owner: 'a', admission: 'caller-full' },
    { name: 'another caller still admitted', maxQueued: 10, maxQueuedPerCaller: 2, owner: 'b', admission: 'ok' },
  ])('admission: $name', ({ maxQueued, maxQueuedPerCaller, owner, admission }) => {
    const q = queueOf({ concurrency: 1, perCaller: 1, maxQueued, maxQueuedPerCaller });
    // the first job runs; the next two wait
    q.push('a:1', 'a:2', 'a:3');
    expect(q.queue.admit(owner)).toBe(admission);
  });

  it.each([
    { name: 'admitted places count until pushed', admits: ['a', 'a'], release: [], next: 'a', admission: 'caller-full' },
    { name: 'a released place is free again', admits: ['a', 'a'], release: ['a'], next: 'a', admission: 'ok' },
    { name: 'admitted places count toward the process queue', admits: ['a', 'b', 'c'], release: [], next: 'd', admission: 'full' },
  ])('admission held between the check and the push: $name', ({ admits, release, next, admission }) => {
    const queue = new FairQueue({ concurrency: 1, perCaller: 1, maxQueued: 3, maxQueuedPerCaller: 2 });
    for (const owner of admits) expect(queue.admit(owner)).toBe('ok');
    for (const owner of release) queue.release(owner);
    expect(queue.admit(next)).toBe(admission);
  });

  it('a push takes the place its admit held', () => {
    const queue = new FairQueue({ concurrency: 1, perCaller: 1, maxQueued: 10, maxQueuedPerCaller: 2 });
    const never = () => new Promise<void>(() => undefined);
    for (const id of ['a:1', 'a:2', 'a:3']) {
      expect(queue.admit('a')).toBe('ok');
      queue.push('a', id, never);
    }
    // a:1 runs, a:2 and a:3 wait: the caller's two places are the two waiting jobs, nothing more
    expect(queue.size).toEqual({ queued: 2, running: 1 });
    expect(queue.admit('a')).toBe('caller-full');
  });

  it('a waiting job taken out never runs; a running one cannot be taken out', async () => {
    const q = queueOf({ concurrency: 1, perCaller: 1 });
    q.push('a:1', 'a:2', 'a:3');
    await tick();
    expect(q.queue.remove('a', 'a:2')).toBe(true);
    expect(q.queue.remove('a', 'a:1')).toBe(false);
    expect(q.queue.size).toEqual({ queued: 1, running: 1 });
    await q.finish('a:1');
    expect(q.started).toEqual(['a:1', 'a:3']);
  });

  it('a job that throws still frees its slot', async () => {
    const queue = new FairQueue({ concurrency: 1, perCaller: 1, maxQueued: 10, maxQueuedPerCaller: 10 });
    const ran: string[] = [];
    queue.push('a', 'bad', () => {
      ran.push('bad');
      throw new Error('boom');
    });
    queue.push('a', 'good', async () => {
      ran.push('good');
    });
    await tick();
    await tick();
    expect(ran).toEqual(['bad', 'good']);
    expect(queue.size).toEqual({ queued: 0, running: 0 });
  });
});

describe('preferenceOf (RFC 7240)', () => {
  it.each<{ header: string | string[] | undefined; respondAsync: boolean; waitSeconds?: number }>([
    { header: undefined, respondAsync: false },
    { header: 'respond-async', respondAsync: true },
    { header: 'Respond-Async', respondAsync: true },
    { header: 'respond-async, wait=10', respondAsync: true, waitSeconds: 10 },
    { header: 'wait=5', respondAsync: false, waitSeconds: 5 },
    { header: ['return=minimal', 'respond-async; foo=bar'], respondAsync: true },
    { header: 'respond-async, wait="7"', respondAsync: true, waitSeconds: 7 },
    { header: 'respond-async, wait=-1', respondAsync: true },
    { header: 'respond-async, wait=1e3', respondAsync: true },
    { header: 'respond-asynchronously', respondAsync: false },
  ])('$header', ({ header, respondAsync, waitSeconds }) => {
    const preference = preferenceOf(header === undefined ? {} : { prefer: header });
    expect(preference.respondAsync).toBe(respondAsync);
    expect(preference.waitSeconds).toBe(waitSeconds);
  });
});
