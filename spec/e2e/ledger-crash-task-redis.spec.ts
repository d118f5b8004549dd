// A crash in the books, mid-call of an image task (docs/tenancy-and-billing.md "Billing contract";
// docs/image-tasks.md): two gateway instances on one Redis, the one running the task killed with SIGKILL
// while the vendor works. The survivor must find the crash in seconds (a lease its instance no longer
// renews), end the task truthfully, and record the vendor work the dead instance may have been billed for:
// the task's terminal event with `vendorWork` and the images absorbed. The fake counts the generations it
// starts. Runs when REDIS_URL is set (.ci/run always sets it).
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { accountedImages, chargedImages, ledger, quotaUsedBy, vendorImages } from '../helpers/ledger-books.js';
import { auth, endedOn, ledgerCrash } from '../helpers/ledger-crash.js';

const REDIS_URL = process.env.REDIS_URL;

describe.runIf(Boolean(REDIS_URL))('a gateway instance killed mid-work: the books and the time to resolution', () => {
  const crash = ledgerCrash(REDIS_URL!);

  it('the instance running an image task dies mid-call: the task ends within about 30 s, its terminal event records the vendor work, absorbed, and no charge', async () => {
    const { cluster, images } = crash;
    const child = await cluster.spawn();
    const other = cluster.instance();
    const release = images.hold();
    try {
      const created = await request(child.url).post('/v1/images/generations').set(auth).set('Prefer', 'respond-async').send({ model: 'x-image-2.0', prompt: 'a lighthouse', n: 2 });
      expect(created.status).toBe(202);
      await vi.waitFor(() => expect(images.started()).toBe(1), { timeout: 5_000, interval: 20 });
      child.process.kill('SIGKILL');
      const killedAt = Date.now();
      // the vendor finishes the paid work whatever became of the gateway
      release();
      await images.settled();
      const { task } = await endedOn(other, created.body.id as string, killedAt);
      expect(task.status).toBe('failed');
      await vi.waitFor(() => expect(other.usage.filter((event) => event.task?.id === created.body.id)).toHaveLength(1));
      const events = [...child.usage, ...other.usage];
      expect(images.imagesMade()).toBe(2);
      expect(vendorImages(events), 'vendorWork.images = what the vendor made').toBe(2);
      expect(ledger(events).find((event) => event.task)).toMatchObject({ images: 0, absorbedImages: 2, lostBy: 'gateway' });
      expect(accountedImages(events)).toBe(2);
      expect(await quotaUsedBy(other.router, 'tenant-a', 'images')).toBe(chargedImages(events));
      expect(images.started()).toBe(1);
    } finally {
      release();
    }
  }, 90_000);
});
