// A crash in the books, between DashScope's asynchronous submit and the record of its task id
// (docs/tenancy-and-billing.md "Billing contract"; docs/image-tasks.md): two gateway instances on one
// Redis, the one that submitted killed with SIGKILL while the vendor's answer is on its way. The survivor
// must find the crash in seconds (a lease its instance no longer renews), end the task truthfully, and
// record the vendor work the dead instance may have been billed for. The fake counts the generations it
// starts. Runs when REDIS_URL is set (.ci/run always sets it).
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { absorbedImages, accountedImages, chargedImages, quotaUsedBy, vendorImages } from '../helpers/ledger-books.js';
import { auth, endedOn, ledgerCrash } from '../helpers/ledger-crash.js';

const REDIS_URL = process.env.REDIS_URL;

describe.runIf(Boolean(REDIS_URL))('a gateway instance killed mid-work: the books and the time to resolution', () => {
  const crash = ledgerCrash(REDIS_URL!);

  it('the instance dies between a DashScope asynchronous submit and storing its upstream task id: the task ends within about 30 s and the vendor work is on its books', async () => {
    const { cluster, images } = crash;
    const child = await cluster.spawn();
    const other = cluster.instance();
    let answer!: () => void;
    const submitAnswered = new Promise<void>((resolve) => (answer = resolve));
    // DashScope took the task (paid from here) and its answer, the id, is on the way when the instance dies
    images.script = () => ({ gate: submitAnswered });
    try {
      const created = await request(child.url).post('/v1/images/generations').set(auth).set('Prefer', 'respond-async').send({ model: 'x-image-plus', prompt: 'submitted, not stored' });
      expect(created.status).toBe(202);
      await vi.waitFor(() => expect(images.started()).toBe(1), { timeout: 5_000, interval: 20 });
      child.process.kill('SIGKILL');
      const killedAt = Date.now();
      answer();
      await images.settled();
      const { task } = await endedOn(other, created.body.id as string, killedAt);
      await vi.waitFor(() => expect(other.usage.filter((event) => event.task?.id === created.body.id)).toHaveLength(1));
      const events = [...child.usage, ...other.usage];
      expect(images.imagesMade()).toBe(1);
      expect(vendorImages(events), 'vendorWork.images = what the vendor made').toBe(1);
      expect(accountedImages(events)).toBe(1);
      if (task.status === 'failed') expect(absorbedImages(events)).toBe(1);
      expect(await quotaUsedBy(other.router, 'tenant-a', 'images')).toBe(chargedImages(events));
      expect(images.started()).toBe(1);
    } finally {
      answer();
    }
  }, 90_000);
});
