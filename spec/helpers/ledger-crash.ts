// The fixture of the ledger's crash specs (spec/e2e/ledger-crash-*-redis.spec.ts; docs/tenancy-and-billing.md
// "Billing contract", docs/image-tasks.md): two gateway instances on one Redis, the one doing the work in a
// process of its own that the spec kills with SIGKILL, and the counting fake of paid images. The cluster
// runs on the gateway's default lease and upstream deadline, since the bound under test is theirs: a crash
// is found and resolved within about 30 s. Each moment of a crash is a spec file of its own, so their
// half-minute waits for a lease run in parallel workers rather than one after another.
import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { type FakePaidImages, startFakePaidImages } from './fake-paid-images.js';
import { KEY_A } from './gateway-app.js';
import { type RedisCluster, redisCluster } from './redis-cluster.js';
import type { RedisInstance } from './redis-instance.js';

const SECRET = `whsec_${Buffer.from('ledger-crash-secret-0123456789ab').toString('base64')}`;
/** The documented bound: a crash is found and resolved within about 30 s (not the upstream deadline, 300 s by default). */
export const RESOLVED_WITHIN_MS = 45_000;
export const auth = { Authorization: `Bearer ${KEY_A}` };

export interface LedgerCrash {
  /** The counting fake (DashScope and Ark), started before the first test. */
  readonly images: FakePaidImages;
  /** The instances of the current test, on a namespace of its own. */
  readonly cluster: RedisCluster;
}

/** Call inside the spec's `describe`: the fake for the file, a fresh cluster for each test, both stopped after. */
export function ledgerCrash(redisUrl: string): LedgerCrash {
  let images: FakePaidImages | undefined;
  const cluster = redisCluster(redisUrl, 'gw-ledger');

  beforeAll(async () => {
    images = await startFakePaidImages();
  });
  beforeEach(() => {
    cluster.start({
      arkBaseURL: images!.arkBaseURL,
      signingSecret: SECRET,
      imagesBaseURL: images!.dashscopeBaseURL,
      imagesPerMinute: 100,
      // the gateway's own upstream deadline (300 s): the crash must be found long before it
      imageTimeoutMs: null,
      idempotency: true,
    });
  });
  afterEach(async () => {
    await cluster.stop();
    images?.reset();
  });
  afterAll(async () => {
    await images?.close();
  });

  return {
    get images() {
      if (!images) throw new Error('ledgerCrash: the fake starts in beforeAll; read it inside a test');
      return images;
    },
    cluster,
  };
}

/** Polls a task on the survivor until it has ended; the time it took after the kill. */
export async function endedOn(gw: RedisInstance, id: string, killedAt: number): Promise<{ task: Record<string, unknown>; ms: number }> {
  let task: Record<string, unknown> = {};
  await vi.waitFor(
    async () => {
      task = (await request(gw.app).get(`/v1/images/tasks/${id}`).set(auth)).body as Record<string, unknown>;
      expect(task.status, `the task ${Math.round((Date.now() - killedAt) / 1000)} s after its instance was killed`).not.toMatch(/^(queued|running)$/);
    },
    { timeout: RESOLVED_WITHIN_MS, interval: 500 },
  );
  return { task, ms: Date.now() - killedAt };
}
