// The Vercel AI SDK's image calls against the gateway with durable results on (docs/routes.md "The
// answer"): `generateImage` asks for b64_json on generations but sends no response_format on edits,
// and reads `b64_json` from every answer. A model whose upstream answers bytes (Gemini) keeps them in
// `b64_json` beside the stored URL unless the caller asked for `url`.
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage } from 'ai';
import { describe, expect, it } from 'vitest';
import { localResultStorage } from '../../lib/storage.js';
import { GEMINI_KEY, startFakeGemini } from '../helpers/fake-gemini.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_JPEG, TINY_PNG } from '../helpers/images.js';
import { tempDir } from '../helpers/temp-dir.js';

const MODEL = 'gemini-3-pro-image-preview';

const gw = await gatewayWith({
  fakes: { gemini: startFakeGemini },
  resolve: (_input, fakes) => ({ provider: 'gemini', baseURL: fakes.gemini.baseURL, apiKey: GEMINI_KEY, model: MODEL }),
  storage: localResultStorage({ directory: tempDir('vercel-ai-images-'), secret: 'vercel-ai-images-secret-0123456789abcdef' }),
  resetEach: true,
});
const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A });

describe('Vercel AI SDK generateImage with storage on: the image bytes come back', () => {
  it('generation', async () => {
    const { images } = await generateImage({ model: provider.image(MODEL), prompt: 'a lighthouse at dusk' });
    expect(images).toHaveLength(1);
    expect(Buffer.from(images[0]!.uint8Array).equals(TINY_PNG)).toBe(true);
    expect(gw.usage.at(-1)).toMatchObject({ route: 'images.generations', images: 1, storedBytes: TINY_PNG.length });
  });

  it('edit (multipart, no response_format): the bytes, not an empty b64_json', async () => {
    const { images } = await generateImage({ model: provider.image(MODEL), prompt: { text: 'make it night', images: [TINY_JPEG] } });
    expect(images).toHaveLength(1);
    expect(images[0]!.uint8Array.length).toBe(TINY_PNG.length);
    expect(Buffer.from(images[0]!.uint8Array).equals(TINY_PNG)).toBe(true);
    expect(gw.usage.at(-1)).toMatchObject({ route: 'images.edits', images: 1, storedBytes: TINY_PNG.length });
  });
});
