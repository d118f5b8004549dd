// Content Credentials on the asynchronous and kept paths (docs/image-tasks.md, docs/provenance.md): an
// image task runs the provenance stage between the output check and storage, so its result (the task
// query and the signed callback), its stored file and its terminal usage event carry the same report
// and, for a caller who signs, the same signed bytes; an Idempotency-Key retry is answered the kept
// signed bytes and report without new work. A fake vendor answers the C2PA reference implementation's
// own test files; the signed output is proved by the reference reader.
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { ProvenanceReport } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { readProvenance } from '../../lib/provenance/read-provenance.js';
import { startCallbackReceiver } from '../helpers/callback-receiver.js';
import { C2PA_ANCHORS, C2PA_SIGNING, c2paFixture, resolveC2paVendor, startFakeC2paVendor } from '../helpers/fake-c2pa-vendor.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';
import { tempDir } from '../helpers/temp-dir.js';

const ANCHORS = C2PA_ANCHORS;
const SIGN = C2PA_SIGNING;
const SECRET = 'whsec_' + Buffer.from('provenance-task-callback-secret-0123').toString('base64');

const gw = await gatewayWith({
  fakes: { vendor: startFakeC2paVendor },
  resolve: resolveC2paVendor,
  storage: localResultStorage({ directory: tempDir('provenance-tasks-'), secret: 'provenance-results-secret-0123456789' }),
  callbacks: { signingSecret: SECRET, allowLocal: true, retryBaseMs: 10, retryMaxMs: 50 },
  // tenant-a signs; tenant-b is read and reported only
  provenance: (caller) => (caller.id === 'tenant-a' ? { trustAnchors: ANCHORS, sign: SIGN } : { trustAnchors: ANCHORS }),
  resetEach: true,
});
const { vendor } = gw.fakes;

type Item = { url: string; provenance?: ProvenanceReport };

async function fetchStored(url: string): Promise<Buffer> {
  const at = new URL(url);
  const res = await request(gw.app)
    .get(at.pathname + at.search)
    .buffer(true);
  expect(res.status).toBe(200);
  return Buffer.from(res.body as Buffer);
}

describe('image tasks', () => {
  it('a signing caller’s task result, stored file, callback body and usage event carry the signed image’s report', async () => {
    const before = vendor.started();
    const receiver = await startCallbackReceiver();
    try {
      const res = await request(gw.app)
        .post('/v1/images/generations')
        .set('Authorization', `Bearer ${KEY_A}`)
        .set('Prefer', 'respond-async')
        .send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg,C.jpg', n: 2, callback_url: receiver.url });
      expect(res.status).toBe(202);
      const task = await imageTaskEnded(gw.app, res.body.id as string, KEY_A);
      expect(task.status).toBe('succeeded');
      const data = (task.result as { data: Item[] }).data;
      expect(data).toHaveLength(2);
      const expected = [
        { c2pa: 'valid', trusted: true, actions: ['c2pa.created'], digital_source_type: 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia' },
        { c2pa: 'valid', trusted: true, actions: ['c2pa.opened'] },
      ];
      for (const [index, item] of data.entries()) {
        const stored = await fetchStored(item.url);
        expect(stored.equals(c2paFixture(index === 0 ? 'no_manifest.jpg' : 'C.jpg'))).toBe(false);
        const proved = await readProvenance(stored, ANCHORS);
        expect(proved).toMatchObject(expected[index]!);
        expect(proved.claim_generator).toMatch(/^express-image-gateway/);
        expect(item.provenance).toEqual(proved);
      }
      const deliveries = await receiver.accepted(2);
      const last = JSON.parse(deliveries.at(-1)!.body) as Record<string, unknown>;
      expect(last).toEqual(task);
      expect(() => new Webhook(SECRET).verify(deliveries.at(-1)!.body, deliveries.at(-1)!.headers as Record<string, string>)).not.toThrow();
      await expect.poll(() => gw.usage.filter((event) => event.task?.status === 'succeeded').length).toBe(1);
      expect(gw.usage.find((event) => event.task?.status === 'succeeded')).toMatchObject({ provenance: ['valid', 'valid'] });
      expect(vendor.started() - before).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it('a reading caller’s task keeps the vendor’s bytes and reports valid, tampered and absent in data order', async () => {
    const files = ['C.jpg', 'XCA.jpg', 'no_manifest.jpg'];
    const res = await request(gw.app)
      .post('/v1/images/generations/async')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'gpt-image-1', prompt: files.join(','), n: 3, response_format: 'url' });
    expect(res.status).toBe(202);
    const task = await imageTaskEnded(gw.app, res.body.id as string, KEY_B);
    expect(task.status).toBe('succeeded');
    const data = (task.result as { data: Item[] }).data;
    for (const [index, item] of data.entries()) expect((await fetchStored(item.url)).equals(c2paFixture(files[index]!))).toBe(true);
    expect(data.map((item) => item.provenance?.c2pa)).toEqual(['valid', 'invalid', 'absent']);
    expect(data[1]!.provenance).toMatchObject({ codes: ['assertion.dataHash.mismatch'] });
    await expect.poll(() => gw.usage.filter((event) => event.task?.status === 'succeeded').length).toBe(1);
    expect(gw.usage.find((event) => event.task?.status === 'succeeded')).toMatchObject({ provenance: ['valid', 'invalid', 'absent'] });
  });
});

describe('kept answers', () => {
  it('an Idempotency-Key retry gets the same signed bytes and report, with no new vendor work', async () => {
    const send = () =>
      request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Idempotency-Key', 'provenance-kept-answer-1').send({ model: 'gpt-image-1', prompt: 'sample1.png' });
    const before = vendor.started();
    const first = await send();
    expect(first.status).toBe(200);
    const again = await send();
    expect(again.status).toBe(200);
    expect(vendor.started() - before).toBe(1);
    const [one, two] = [first.body.data[0] as { b64_json: string; provenance: ProvenanceReport }, again.body.data[0] as { b64_json: string; provenance: ProvenanceReport }];
    expect(two.b64_json).toBe(one.b64_json);
    expect(two.provenance).toEqual(one.provenance);
    const proved = await readProvenance(Buffer.from(one.b64_json, 'base64'), ANCHORS);
    expect(proved).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.created'] });
    expect(one.provenance).toEqual(proved);
  });
});
