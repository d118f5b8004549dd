// examples/simulated-gemini.ts through the gateway, as the example wires it: an image from
// generateContent (a real PNG as inlineData), and a Veo task whose video (the sample WebM, downloadable
// only with the key) the gateway stores and answers by its own URL.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { SIMULATED_GEMINI_KEY, startSimulatedGemini } from '../../examples/simulated-gemini.js';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const SAMPLE_VIDEO = readFileSync(new URL('../../examples/assets/sample-video.webm', import.meta.url));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const simulated = await startSimulatedGemini({ videoMs: 0 });
afterAll(() => simulated.close());
const gw = await gatewayWith({
  storage: localResultStorage({ directory: tempDir('simulated-gemini-'), secret: 'a-results-signing-secret-of-more-than-32-chars' }),
  resolve: ({ route }) =>
    route === 'video.tasks'
      ? { provider: 'gemini', baseURL: simulated.baseURL, apiKey: SIMULATED_GEMINI_KEY, model: 'veo-3.0-generate-001' }
      : { provider: 'gemini', baseURL: simulated.baseURL, apiKey: SIMULATED_GEMINI_KEY, model: 'gemini-2.5-flash-image' },
});

describe('the simulated Gemini API', () => {
  it('answers an image as a PNG', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });
    const result = await client.images.generate({ model: 'nano-banana', prompt: 'a lighthouse', size: '1536x1024', response_format: 'b64_json' });
    const png = Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64');
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  });

  it('runs a Veo task whose stored video is the sample WebM, and refuses a download without the key', async () => {
    const created = await request(gw.url)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'veo-3', content: [{ type: 'text', text: 'a paper boat' }] });
    expect(created.status, created.text).toBe(200);
    let task: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 10 && task.status !== 'succeeded'; attempt += 1) {
      task = (
        await request(gw.url)
          .get(`/api/v3/contents/generations/tasks/${created.body.id as string}`)
          .set('Authorization', `Bearer ${KEY_A}`)
      ).body as Record<string, unknown>;
    }
    expect(task).toMatchObject({ status: 'succeeded', duration: 8, resolution: '720p' });
    const url = (task.content as { video_url: string }).video_url;
    expect(url.startsWith(`${gw.url}/v1/results/`)).toBe(true);
    const video = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(video.equals(SAMPLE_VIDEO)).toBe(true);
    expect(JSON.stringify(task)).not.toContain(SIMULATED_GEMINI_KEY);

    const operation = await fetch(`${simulated.baseURL}/models/veo-3.0-generate-001:predictLongRunning`, {
      method: 'POST',
      headers: { 'x-goog-api-key': SIMULATED_GEMINI_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ instances: [{ prompt: 'x' }], parameters: {} }),
    }).then((res) => res.json() as Promise<{ name: string }>);
    const done = await fetch(`${simulated.baseURL}/${operation.name}`, { headers: { 'x-goog-api-key': SIMULATED_GEMINI_KEY } }).then(
      (res) => res.json() as Promise<{ response: { generateVideoResponse: { generatedSamples: Array<{ video: { uri: string } }> } } }>,
    );
    const uri = done.response.generateVideoResponse.generatedSamples[0]!.video.uri;
    expect((await fetch(uri)).status).toBe(403);
    expect((await fetch(uri, { headers: { 'x-goog-api-key': SIMULATED_GEMINI_KEY } })).status).toBe(200);
  });
});
