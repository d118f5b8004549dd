// Every image model `npm start`'s example lists (examples/server.ts, every vendor simulated), driven by
// the Vercel AI SDK's openai provider as an app would: `generateImage` on each model listed for
// generations (it asks for b64_json), and an edit on each model listed for edits (multipart, no
// response_format: the SDK reads b64_json all the same). Every answer holds real image bytes, with
// durable results on and off (docs/routes.md "The answer"): never an empty b64_json read as 0 bytes.
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage } from 'ai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExampleApp, createExampleApp } from '../../examples/server.js';
import { listen } from '../helpers/gateway-app.js';
import { sniffImageType } from '../../lib/images/sniff-image-type.js';
import { TINY_PNG } from '../helpers/images.js';
import { tempDir } from '../helpers/temp-dir.js';

interface Listed {
  id: string;
  endpoints?: string[];
}

describe.each([
  ['on', true],
  ['off', false],
])('the example with storage %s', (_label, storage) => {
  let example: ExampleApp;
  let server: { url: string; close(): Promise<void> };
  let models: Listed[] = [];
  let provider: ReturnType<typeof createOpenAI>;

  beforeAll(async () => {
    // no vendor variable: every vendor is the example's own simulation
    example = await createExampleApp({ env: { RESULTS_DIR: tempDir('vercel-example-') }, storage, arkTiming: { queuedMs: 50, runningMs: 50 } });
    server = await listen(example.app);
    const listed = await request(example.app).get('/v1/models').set('Authorization', `Bearer ${example.demoKey}`);
    expect(listed.status).toBe(200);
    models = (listed.body as { data: Listed[] }).data;
    provider = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: example.demoKey });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await example?.close();
  });

  const listedFor = (endpoint: string): string[] => models.filter((model) => model.endpoints?.includes(endpoint)).map((model) => model.id);

  it('lists image models for both routes', () => {
    expect(listedFor('/v1/images/generations').length).toBeGreaterThan(3);
    expect(listedFor('/v1/images/edits').length).toBeGreaterThan(2);
    // an edit-only model is listed for edits alone
    expect(listedFor('/v1/images/edits')).toContain('x-image-edit');
    expect(listedFor('/v1/images/generations')).not.toContain('x-image-edit');
  });

  it('generateImage answers real bytes for every model listed for generations', async () => {
    const failures: string[] = [];
    for (const id of listedFor('/v1/images/generations')) {
      try {
        const { images } = await generateImage({ model: provider.image(id), prompt: 'a lighthouse at dusk', maxRetries: 0 });
        if (images.length === 0 || images[0]!.uint8Array.length === 0 || !sniffImageType(Buffer.from(images[0]!.uint8Array))) failures.push(`${id}: no image bytes`);
      } catch (error) {
        failures.push(`${id}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('an edit answers real bytes for every model listed for edits', async () => {
    const failures: string[] = [];
    for (const id of listedFor('/v1/images/edits')) {
      try {
        const { images } = await generateImage({ model: provider.image(id), prompt: { text: 'make it night', images: [TINY_PNG] }, maxRetries: 0 });
        if (images.length === 0 || images[0]!.uint8Array.length === 0 || !sniffImageType(Buffer.from(images[0]!.uint8Array))) failures.push(`${id}: no image bytes`);
      } catch (error) {
        failures.push(`${id}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
