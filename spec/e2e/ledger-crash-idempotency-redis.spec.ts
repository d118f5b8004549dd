// A crash in the books, mid-call of a synchronous request with an Idempotency-Key
// (docs/tenancy-and-billing.md "Billing contract" and "Retries"): two gateway instances on one Redis,
// the one holding the key killed with SIGKILL while the vendor works. The survivor must free the key for
// the retry in seconds (a lease its instance no longer renews) with a clear answer, and record the dead
// attempt's vendor work. The fake counts the generations it starts. Runs when REDIS_URL is set (.ci/run
// always sets it).
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { absorbedImages, accountedImages, chargedImages, quotaUsedBy, vendorImages } from '../helpers/ledger-books.js';
import { RESOLVED_WITHIN_MS, auth, ledgerCrash } from '../helpers/ledger-crash.js';

const REDIS_URL = process.env.REDIS_URL;

describe.runIf(Boolean(REDIS_URL))('a gateway instance killed mid-work: the books and the time to resolution', () => {
  const crash = ledgerCrash(REDIS_URL!);

  it('a synchronous request with an Idempotency-Key whose instance dies mid-call: the key is freed for the retry within about 30 s, and the dead attempt is on the books', async () => {
    const { cluster, images } = crash;
    const child = await cluster.spawn();
    const other = cluster.instance();
    const release = images.hold();
    const key = { 'Idempotency-Key': `order-crash-${randomBytes(3).toString('hex')}` };
    const body = JSON.stringify({ model: 'x-image-2.0', prompt: 'paid once, crashed' });
    try {
      const lost = request(child.url)
        .post('/v1/images/generations')
        .set(auth)
        .set(key)
        .set('Content-Type', 'application/json')
        .send(body)
        .catch(() => undefined);
      await vi.waitFor(() => expect(images.started()).toBe(1), { timeout: 5_000, interval: 20 });
      child.process.kill('SIGKILL');
      await lost;
      const killedAt = Date.now();
      release();
      await images.settled();
      // the retry, as the SDKs would send it: the key answers something other than "in use" within the bound
      let retry: request.Response | undefined;
      await vi.waitFor(
        async () => {
          retry = await request(other.app).post('/v1/images/generations').set(auth).set(key).set('Content-Type', 'application/json').send(body);
          expect(retry.body?.error?.code, `the key ${Math.round((Date.now() - killedAt) / 1000)} s after its instance was killed`).not.toBe('idempotency_key_in_use');
        },
        { timeout: RESOLVED_WITHIN_MS, interval: 1_000 },
      );
      await images.settled();
      const events = [...child.usage, ...other.usage];
      // every generation started is on the books, the dead attempt's as the operator's
      await vi.waitFor(() => expect(vendorImages(events)).toBe(images.imagesMade()));
      expect(accountedImages(events)).toBe(images.imagesMade());
      expect(absorbedImages(events), "the dead attempt's image").toBeGreaterThanOrEqual(1);
      expect(await quotaUsedBy(other.router, 'tenant-a', 'images')).toBe(chargedImages(events));
    } finally {
      release();
    }
  }, 90_000);
});
