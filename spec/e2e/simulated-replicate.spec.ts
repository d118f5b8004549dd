// The example's simulated Replicate (examples/simulated-replicate.ts) behind the gateway: it speaks the
// predictions API the adapter expects, so `npm start` can serve Replicate models with no account: PNG
// images through the image routes, and a video task that ends with the sample video.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startSimulatedReplicate } from '../../examples/simulated-replicate.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const gw = await gatewayWith({
  fakes: { replicate: startSimulatedReplicate },
  resolve: ({ model }, { replicate }) => ({ provider: 'replicate', baseURL: replicate.baseURL, apiKey: 'r8_simulated', model }),
});
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });

describe('simulated Replicate', () => {
  it('answers FLUX schnell images as PNGs, n of them from one prediction', async () => {
    const result = await client.images.generate({ model: 'black-forest-labs/flux-schnell', prompt: 'a lighthouse', size: '1536x1024', n: 2, response_format: 'b64_json' });
    expect(result.data).toHaveLength(2);
    for (const image of result.data ?? [])
      expect(
        Buffer.from(image.b64_json ?? '', 'base64')
          .subarray(0, 8)
          .equals(PNG_SIGNATURE),
      ).toBe(true);
  });

  it('runs a video task to a downloadable video', async () => {
    const created = await request(gw.app)
      .post('/api/v3/contents/generations/tasks')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'kwaivgi/kling-v2.1', content: [{ type: 'text', text: 'a cat on a skateboard' }], duration: 5 });
    expect(created.status, created.text).toBe(200);
    let task: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          task = (
            await request(gw.app)
              .get(`/api/v3/contents/generations/tasks/${String(created.body.id)}`)
              .set('Authorization', `Bearer ${KEY_A}`)
          ).body as Record<string, unknown>;
          return task.status;
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe('succeeded');
    const video = await fetch((task.content as { video_url: string }).video_url);
    expect(video.status).toBe(200);
    expect((await video.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  }, 30_000);
});
