// The example signs every image with a CA it makes at start (docs/provenance.md "Making a CA and a
// signing certificate"): its certificates, made with node:crypto alone, are accepted by the C2PA
// reference reader, and each answer reports the image valid, signed by the example and trusted by
// its one anchor, the example's CA.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeExampleSigner } from '../../examples/c2pa-certificates.js';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';
import { readySigning, signImage } from '../../lib/provenance/image-signing.js';
import { readProvenance } from '../../lib/provenance/read-provenance.js';
import { c2paFixture } from '../helpers/fake-c2pa-vendor.js';
import { listen } from '../helpers/gateway-app.js';

describe('the example signs its images with its own CA', () => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    example = await createExampleApp({ env: { GATEWAY_DEMO_KEY: 'sk-demo-local-only' }, provenance: true });
    server = await listen(example.app);
  });

  afterAll(async () => {
    await server.close();
    await example.close();
  });

  it('its CA and signing certificate sign a JPEG the reference reader reports valid and trusted by that CA alone', async () => {
    const signer = makeExampleSigner('Example signer check');
    const signing = readySigning({ certificate: signer.chainPem, privateKey: signer.privateKey, algorithm: 'es256' });
    const signed = await signImage(c2paFixture('no_manifest.jpg'), signing, { provider: 'openai', model: 'gpt-image-1', caller: { id: 'tenant-a' }, inputs: [] });
    expect(await readProvenance(signed!, signer.caPem)).toMatchObject({ c2pa: 'valid', trusted: true, signer: 'Example signer check', actions: ['c2pa.created'] });
    expect(await readProvenance(signed!, makeExampleSigner().caPem)).toMatchObject({ c2pa: 'valid', trusted: false });
  });

  it('every simulated image of a generation is signed and reported through the official SDK', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
    const answer = await client.images.generate({ model: 'x-gpt-image', prompt: 'A lighthouse at dawn', n: 2 });
    const reports = (answer.data ?? []).map((item) => (item as { provenance?: unknown }).provenance);
    expect(reports).toHaveLength(2);
    for (const report of reports) {
      expect(report).toMatchObject({ c2pa: 'valid', signer: 'Image gateway example', trusted: true, digital_source_type: 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia' });
    }
  }, 30_000);
});
