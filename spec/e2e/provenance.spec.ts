// Content Credentials end to end (docs/provenance.md): a host app with the router mounted, the official
// openai SDK at its default retries, and a fake vendor answering the C2PA reference implementation's
// own test files. Each image is reported truthfully (valid, tampered, absent; trusted by the
// operator's anchors), kept byte for byte unless the operator signs, and signed output is proved by the
// reference reader: the operator's signer, the vendor's manifest as the parent ingredient.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type ProvenanceReport, createGatewayRouter, staticKeys } from '../../lib/index.js';
import { localResultStorage } from '../../lib/storage.js';
import { c2paEngine } from '../../lib/provenance/c2pa-engine.js';
import { readProvenance } from '../../lib/provenance/read-provenance.js';
import { C2PA_ANCHORS, C2PA_SIGNING, c2paFixture, c2paPem, resolveC2paVendor, startFakeC2paVendor } from '../helpers/fake-c2pa-vendor.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { independentlyValidated } from '../helpers/independent-c2pa.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { tempDir } from '../helpers/temp-dir.js';

const pem = c2paPem;
const ANCHORS = C2PA_ANCHORS;
const SIGN = C2PA_SIGNING;

const gw = await gatewayWith({
  fakes: { vendor: startFakeC2paVendor },
  resolve: resolveC2paVendor,
  storage: localResultStorage({ directory: tempDir('provenance-'), secret: 'provenance-results-secret-0123456789' }),
  // tenant-a: read, trusted by the fixtures' roots, signed; tenant-b: read and reported only
  provenance: (caller) => (caller.id === 'tenant-a' ? { trustAnchors: ANCHORS, sign: SIGN } : { trustAnchors: ANCHORS }),
  resetEach: true,
});
const { vendor } = gw.fakes;
const reader = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_B });
const signer = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });

/** The reference reader's whole manifest store of a file, with the fixtures' roots as anchors. */
async function manifestStoreOf(bytes: Buffer): Promise<ManifestStore> {
  const engine = await c2paEngine();
  const settings = JSON.stringify({ trust: { trust_anchors: ANCHORS }, verify: { verify_trust: true, remote_manifest_fetch: false, ocsp_fetch: false } });
  const reader = await engine.WasmReader.fromBytes('image/jpeg', bytes, settings);
  return JSON.parse(reader.json()) as ManifestStore;
}

interface ManifestStore {
  active_manifest: string;
  validation_state: string;
  manifests: Record<
    string,
    { ingredients: Array<{ relationship: string; title: string }>; assertions: Array<{ label: string; data: { actions: Array<{ action: string; digitalSourceType?: string }> } }> }
  >;
}

type Reported = { b64_json?: string | null; url?: string | null; provenance?: ProvenanceReport };

describe('reading and reporting, bytes kept', () => {
  it('reports valid and trusted, tampered with its codes, and absent, in the order of data, with every byte as the vendor sent it', async () => {
    const files = ['C.jpg', 'XCA.jpg', 'no_manifest.jpg', 'E-sig-CA.jpg'];
    const before = vendor.started();
    const answer = await reader.images.generate({ model: 'gpt-image-1', prompt: files.join(','), n: files.length });
    const data = answer.data as Reported[];
    expect(data.map((item) => Buffer.from(item.b64_json!, 'base64').equals(c2paFixture(files[data.indexOf(item)]!)))).toEqual([true, true, true, true]);
    expect(data[0]!.provenance).toMatchObject({ c2pa: 'valid', trusted: true, signer: 'C2PA Test Signing Cert', actions: ['c2pa.created'] });
    expect(data[1]!.provenance).toMatchObject({ c2pa: 'invalid', codes: ['assertion.dataHash.mismatch'] });
    expect(data[2]!.provenance).toEqual({ c2pa: 'absent' });
    expect(data[3]!.provenance).toMatchObject({ c2pa: 'invalid', codes: ['claimSignature.mismatch'] });
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]).toMatchObject({ images: 4, provenance: ['valid', 'invalid', 'absent', 'invalid'] });
    expect(vendor.started() - before).toBe(1);
  });

  it("a report the vendor wrote itself never reaches the caller: dropped for a caller without provenance, replaced by the gateway's own for one with it", async () => {
    const perCaller = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      provenance: (caller) => (caller.id === 'tenant-a' ? {} : null),
    });
    const ask = (key: string, stream = false) =>
      request(perCaller.app)
        .post('/v1/images/generations')
        .set('Authorization', `Bearer ${key}`)
        .send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg+forged', ...(stream ? { stream: true } : {}) });
    expect((await ask(KEY_B)).body.data[0].provenance).toBeUndefined();
    expect((await ask(KEY_A)).body.data[0].provenance).toEqual({ c2pa: 'absent' });
    const streamed = (await ask(KEY_A, true)).text;
    expect(streamed).toContain('"provenance":{"c2pa":"absent"}');
    expect(streamed).not.toContain('OpenAI');
    // a caller without provenance gets the vendor's own stream relayed, less the vendor's report
    const relayed = await ask(KEY_B, true);
    expect(relayed.text).toContain('event: image_generation.completed');
    expect(relayed.text).toContain(c2paFixture('no_manifest.jpg').toString('base64'));
    expect(relayed.text).not.toContain('provenance');
  });

  it('a valid signer outside the anchors is trusted: false', async () => {
    const other = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      provenance: { trustAnchors: pem('es256-chain.pem').split('-----END CERTIFICATE-----')[1]! + '-----END CERTIFICATE-----' },
    });
    const res = await request(other.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send({ model: 'gpt-image-1', prompt: 'C.jpg' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].provenance).toMatchObject({ c2pa: 'valid', trusted: false });
  });

  it('a url answer is downloaded once, read, and stored from those same bytes, kept as they came', async () => {
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send({ model: 'gpt-image-1', prompt: 'CA.jpg', response_format: 'url' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].provenance).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.opened', 'c2pa.color_adjustments'] });
    const url = new URL(res.body.data[0].url);
    const stored = await request(gw.app)
      .get(url.pathname + url.search)
      .buffer(true);
    expect(Buffer.from(stored.body as Buffer).equals(c2paFixture('CA.jpg'))).toBe(true);
    // one download of the vendor's file serves both the report and the stored copy
    expect(vendor.requests.filter((item) => item.method === 'GET' && item.path === '/files/CA.jpg')).toHaveLength(1);
  });
});

describe('signing, per caller', () => {
  it("signs an image without a manifest: c2pa.created with trainedAlgorithmicMedia, the operator's signer, valid in the reference reader", async () => {
    const answer = await signer.images.generate({ model: 'gpt-image-1', prompt: 'no_manifest.jpg' });
    const item = answer.data![0] as Reported;
    const bytes = Buffer.from(item.b64_json!, 'base64');
    expect(bytes.equals(c2paFixture('no_manifest.jpg'))).toBe(false);
    const proved = await readProvenance(bytes, ANCHORS);
    expect(proved).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.created'], digital_source_type: 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia' });
    expect(proved.claim_generator).toMatch(/^express-image-gateway\//);
    expect(item.provenance).toEqual(proved);
    expect(await independentlyValidated(bytes)).toEqual({ valid: true, failed: [] });
  });

  it("an image the vendor signed gets the operator's manifest with the vendor's as parent (c2pa.opened)", async () => {
    const answer = await signer.images.generate({ model: 'gpt-image-1', prompt: 'C.jpg' });
    const bytes = Buffer.from((answer.data![0] as Reported).b64_json!, 'base64');
    expect(await readProvenance(bytes, ANCHORS)).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.opened'], claim_generator: expect.stringMatching(/^express-image-gateway/) });
    expect(await independentlyValidated(bytes)).toEqual({ valid: true, failed: [] });
  });

  it("an edit's input image that carries a manifest becomes a component ingredient (c2pa.placed), the source type composite", async () => {
    const answer = await signer.images.edit({ model: 'gpt-image-1', image: await toFile(c2paFixture('CA.jpg'), 'photo.jpg', { type: 'image/jpeg' }), prompt: 'no_manifest.jpg' });
    const bytes = Buffer.from((answer.data![0] as Reported).b64_json!, 'base64');
    const store = await manifestStoreOf(bytes);
    expect(store.validation_state).toBe('Trusted');
    const active = store.manifests[store.active_manifest]!;
    expect(active.ingredients.map((ingredient) => [ingredient.relationship, ingredient.title])).toEqual([['componentOf', 'photo.jpg']]);
    const actions = active.assertions.find((assertion) => assertion.label.startsWith('c2pa.actions'))!.data.actions;
    expect(actions.map((action) => action.action)).toEqual(['c2pa.created', 'c2pa.placed']);
    expect(actions[0]!.digitalSourceType).toBe('http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia');
    expect(await independentlyValidated(bytes)).toEqual({ valid: true, failed: [] });
  });

  it('signs PNG and WebP; a stored url serves the signed file', async () => {
    const res = await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'gpt-image-1', prompt: 'sample1.png,sample1.webp', n: 2, response_format: 'url' });
    expect(res.status).toBe(200);
    for (const item of res.body.data as Array<{ url: string; provenance: ProvenanceReport }>) {
      const url = new URL(item.url);
      const stored = await request(gw.app)
        .get(url.pathname + url.search)
        .buffer(true);
      const proved = await readProvenance(Buffer.from(stored.body as Buffer), ANCHORS);
      expect(proved).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.created'] });
      expect(item.provenance).toEqual(proved);
      // the independent reader knows JPEG and PNG, not WebP
      const file = Buffer.from(stored.body as Buffer);
      if (file.subarray(8, 12).toString('latin1') !== 'WEBP') expect(await independentlyValidated(file)).toEqual({ valid: true, failed: [] });
    }
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]).toMatchObject({ images: 2, provenance: ['valid', 'valid'] });
  });

  it('an upstream that answers URLs by default: the signed image is stored and answered by URL alone, as the upstream answered', async () => {
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'url:no_manifest.jpg' });
    expect(res.status).toBe(200);
    const item = res.body.data[0] as { url: string; b64_json?: string; provenance: ProvenanceReport };
    expect(item.b64_json).toBeUndefined();
    const url = new URL(item.url);
    expect(url.origin).not.toBe(vendor.origin);
    const stored = await request(gw.app)
      .get(url.pathname + url.search)
      .buffer(true);
    expect(await readProvenance(Buffer.from(stored.body as Buffer), ANCHORS)).toEqual(item.provenance);
    expect(item.provenance).toMatchObject({ c2pa: 'valid', trusted: true });
  });

  it("a stream's final image is signed and reported at the top of its completed event; no partial image is sent", async () => {
    const before = vendor.started();
    const stream = await signer.images.generate({ model: 'gpt-image-1', prompt: 'no_manifest.jpg', stream: true, partial_images: 2 });
    const events: Array<{ type: string; b64_json?: string; provenance?: ProvenanceReport }> = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed']);
    const proved = await readProvenance(Buffer.from(events[0]!.b64_json!, 'base64'), ANCHORS);
    expect(proved).toMatchObject({ c2pa: 'valid', trusted: true });
    expect(events[0]!.provenance).toEqual(proved);
    expect(vendor.started() - before).toBe(1);
  });

  it('a caller whose options are null gets no report and the bytes as the vendor sent them', async () => {
    const perCaller = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      provenance: (caller) => (caller.id === 'tenant-a' ? { sign: SIGN } : null),
    });
    const res = await request(perCaller.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].provenance).toBeUndefined();
    expect(Buffer.from(res.body.data[0].b64_json, 'base64').equals(c2paFixture('no_manifest.jpg'))).toBe(true);
    await expect.poll(() => perCaller.usage.length).toBe(1);
    expect(perCaller.usage[0]!.provenance).toBeUndefined();
  });
});

describe('failures and configuration', () => {
  it("a signer that fails is a 502 with nothing delivered; the vendor's work is on the books", async () => {
    const failing = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      storage: localResultStorage({ directory: tempDir('provenance-failing-'), secret: 'provenance-results-secret-0123456789' }),
      provenance: { sign: { certificate: SIGN.certificate, algorithm: 'es256', signer: () => Promise.reject(new Error('kms arn:aws:kms:secret-key-id is unavailable')) } },
    });
    const client = new OpenAI({ baseURL: `${failing.url}/v1`, apiKey: KEY_A });
    const failure = await client.images.generate({ model: 'gpt-image-1', prompt: 'no_manifest.jpg' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    const error = failure as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.code).toBe('provenance_signing_failed');
    expect(error.message).not.toContain('arn:aws');
    // the SDK retries a 502 at its defaults: each retry is paid work the vendor started, each on the books
    const started = failing.fakes.vendor.started();
    expect(started).toBeGreaterThanOrEqual(1);
    await expect.poll(() => failing.usage.length).toBe(started);
    for (const event of failing.usage) expect(event).toMatchObject({ status: 502, images: 0, errorCode: 'provenance_signing_failed', vendorWork: { images: 1 } });
    const undelivered = failing.usage.reduce((sum, event) => sum + (event.undeliveredImages ?? 0) + (event.absorbedImages ?? 0), 0);
    expect(undelivered).toBe(started);
  });

  it("without result storage a signing caller's url answer is the vendor's own file, reported as such; its b64_json answer is signed", async () => {
    const noStorage = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      // a function: createGatewayRouter cannot know at start that it signs
      provenance: () => ({ trustAnchors: ANCHORS, sign: SIGN }),
    });
    const byUrl = await request(noStorage.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg', response_format: 'url' });
    expect(byUrl.status).toBe(200);
    expect(byUrl.body.data[0].url).toBe(`${noStorage.fakes.vendor.origin}/files/no_manifest.jpg`);
    expect(byUrl.body.data[0].provenance).toEqual({ c2pa: 'absent' });
    const inline = await request(noStorage.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg', response_format: 'b64_json' });
    expect(inline.body.data[0].provenance).toMatchObject({ c2pa: 'valid', trusted: true });
    expect(await readProvenance(Buffer.from(inline.body.data[0].b64_json as string, 'base64'), ANCHORS)).toEqual(inline.body.data[0].provenance);
  });

  it('createGatewayRouter refuses sign without result storage, and a self-signed or CA certificate', () => {
    const base = { verifyKey: staticKeys({ [KEY_A]: { id: 'a' } }), resolveUpstream: () => null };
    expect(() => createGatewayRouter({ ...base, provenance: { sign: SIGN } })).toThrow(/needs result storage/);
    const root = ANCHORS.split('-----END CERTIFICATE-----')[0] + '-----END CERTIFICATE-----';
    const storage = localResultStorage({ directory: tempDir('provenance-cfg-'), secret: 'provenance-results-secret-0123456789' });
    expect(() => createGatewayRouter({ ...base, storage, provenance: { sign: { ...SIGN, certificate: root } } })).toThrow(/CA certificate|self-signed/);
    expect(() => createGatewayRouter({ ...base, storage, provenance: { sign: { ...SIGN, algorithm: 'rs1' as 'es256' } } })).toThrow(/algorithm/);
    expect(() => createGatewayRouter({ ...base, provenance: { trustAnchors: 'not a pem' } })).toThrow(/trustAnchors/);
  });
});
