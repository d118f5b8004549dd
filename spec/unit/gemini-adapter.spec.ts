// The Gemini adapter's pure functions (docs/providers/gemini.md): size to aspectRatio/imageSize, the request body,
// Google's error envelopes and the answer's images, refusals and missing images, table by table.
import { describe, expect, it } from 'vitest';
import type { ImageGenerationRequest } from '../../lib/images/image-request.js';
import { InlineBase64, UploadedImage, encodeJsonWithUploads } from '../../lib/images/uploaded-image.js';
import { DataUrlText } from '../../lib/json/data-url-text.js';
import { fanOutOf, geminiImageConfig, translateImageRequest, translateImageResponse } from '../../lib/providers/google/gemini.js';
import { normalizeGeminiError } from '../../lib/providers/google/google-errors.js';
import { TINY_PNG } from '../helpers/images.js';
import { thrown } from '../helpers/thrown.js';

const request = (parameters: Record<string, unknown> = {}, extra?: Record<string, unknown>): ImageGenerationRequest => ({
  model: 'gemini-3-pro-image-preview',
  content: [{ text: 'a cat' }],
  parameters,
  responseFormat: 'b64_json',
  ...(extra ? { extra } : {}),
});

describe('geminiImageConfig', () => {
  it.each([
    [undefined, {}],
    ['auto', {}],
    ['1024*1024', { aspectRatio: '1:1' }],
    ['1024x1024', { aspectRatio: '1:1' }],
    ['512x512', { aspectRatio: '1:1' }],
    ['1536*1024', { aspectRatio: '3:2', imageSize: '2K' }],
    ['1024*1536', { aspectRatio: '2:3', imageSize: '2K' }],
    ['1792*1024', { aspectRatio: '16:9', imageSize: '2K' }],
    ['1344*768', { aspectRatio: '16:9', imageSize: '2K' }],
    ['1024*768', { aspectRatio: '4:3' }],
    ['2048*2048', { aspectRatio: '1:1', imageSize: '2K' }],
    ['4096*4096', { aspectRatio: '1:1', imageSize: '4K' }],
    ['3360*1440', { aspectRatio: '21:9', imageSize: '4K' }],
    ['1K', {}],
    ['2k', { imageSize: '2K' }],
    ['4K', { imageSize: '4K' }],
  ])('%s maps to %j', (size, config) => {
    expect(geminiImageConfig(size)).toEqual(config);
  });

  it.each([['3000*1000'], ['1000*3000'], ['8K'], ['big'], ['0x0']])('%s is a 400 naming size', (size) => {
    const error = thrown(() => geminiImageConfig(size));
    expect(error.status).toBe(400);
    expect(error.param).toBe('size');
  });
});

describe('translateImageRequest', () => {
  it('asks for an image, maps size and seed, and keeps the caller order of parts', async () => {
    const upload = new UploadedImage('image/png', [TINY_PNG], TINY_PNG.length);
    const body = translateImageRequest({ ...request({ size: '1536*1024', seed: 7, n: 2 }), content: [{ image: upload }, { text: 'edit it' }] });
    expect(body.generationConfig).toEqual({ responseModalities: ['IMAGE'], seed: 7, imageConfig: { aspectRatio: '3:2', imageSize: '2K' } });
    expect(body.contents[0].parts[1]).toEqual({ text: 'edit it' });
    expect(JSON.parse(await bodyText(body))).toEqual({
      contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: TINY_PNG.toString('base64') } }, { text: 'edit it' }] }],
      generationConfig: { responseModalities: ['IMAGE'], seed: 7, imageConfig: { aspectRatio: '3:2', imageSize: '2K' } },
    });
  });

  it('sends a Data URL view as bare base64, without a copy of its header', async () => {
    const text = Buffer.from(`data:image/png;base64,${TINY_PNG.toString('base64')}`, 'latin1');
    const view = new DataUrlText(text, 'image/png', TINY_PNG.length);
    const body = translateImageRequest({ ...request(), content: [{ text: 'x' }, { image: view }] });
    expect(body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: new InlineBase64(view) } });
    expect((JSON.parse(await bodyText(body)) as { contents: Array<{ parts: Array<{ inlineData: { data: string } }> }> }).contents[0]!.parts[1]!.inlineData.data).toBe(TINY_PNG.toString('base64'));
  });

  it.each([
    ['a public URL image', { ...request(), content: [{ text: 'x' }, { image: 'https://images.example.com/a.png' }] }, 'input.messages[0].content[1].image'],
    ['parameters.watermark', request({ watermark: false }), 'parameters.watermark'],
    ['parameters.prompt_extend', request({ prompt_extend: true }), 'parameters.prompt_extend'],
    ['an unknown top-level field', request({}, { style: 'vivid' }), 'style'],
    ['generationConfig.candidateCount', request({}, { generationConfig: { candidateCount: 2 } }), 'generationConfig.candidateCount'],
    ['generationConfig.imageConfig.personGeneration', request({}, { generationConfig: { imageConfig: { personGeneration: 'ALLOW_ALL' } } }), 'generationConfig.imageConfig.personGeneration'],
    ['responseModalities without IMAGE', request({}, { generationConfig: { responseModalities: ['TEXT'] } }), 'generationConfig.responseModalities'],
    ['safetySettings that are not a list', request({}, { safetySettings: { category: 'x' } }), 'safetySettings'],
    ['a responseModalities entry that is no modality', request({}, { generationConfig: { responseModalities: ['IMAGE', { a: 1 }] } }), 'generationConfig.responseModalities'],
    ['a temperature that is a string', request({}, { generationConfig: { temperature: '0.5' } }), 'generationConfig.temperature'],
    ['a seed that is no integer', request({}, { generationConfig: { seed: 1.5 } }), 'generationConfig.seed'],
    ['a topK that is an object', request({}, { generationConfig: { topK: { valueOf: 3 } } }), 'generationConfig.topK'],
    ['an imageConfig.aspectRatio Gemini has not', request({}, { generationConfig: { imageConfig: { aspectRatio: '7:3' } } }), 'generationConfig.imageConfig.aspectRatio'],
    ['an object as imageConfig.aspectRatio', request({}, { generationConfig: { imageConfig: { aspectRatio: { ratio: '1:1' } } } }), 'generationConfig.imageConfig.aspectRatio'],
    ['an imageConfig.imageSize Gemini has not', request({}, { generationConfig: { imageConfig: { imageSize: '1k ' } } }), 'generationConfig.imageConfig.imageSize'],
    ['safetySettings longer than Gemini has categories', request({}, { safetySettings: Array(33).fill({ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF' }) }), 'safetySettings'],
    ['a safety setting with another field', request({}, { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'OFF', x: 1 }] }), 'safetySettings[0]'],
    ['a safety setting whose value is no enum name', request({}, { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: { off: true } }] }), 'safetySettings[0]'],
    [
      'a data: URL whose bytes are no image',
      { ...request(), content: [{ text: 'x' }, { image: `data:image/png;base64,${Buffer.from('<html></html>').toString('base64')}` }] },
      'input.messages[0].content[1].image',
    ],
  ])('%s is a 400 naming it', (_name, input, param) => {
    const error = thrown(() => translateImageRequest(input));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('tells Gemini the type the bytes of a data: URL are, whatever its label says', () => {
    const body = translateImageRequest({ ...request(), content: [{ image: `data:image/jpeg;base64,${TINY_PNG.toString('base64')}` }] });
    expect(body.contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'image/png', data: TINY_PNG.toString('base64') } });
  });

  it.each([
    [{}, 1],
    [{ n: 1 }, 1],
    [{ n: 4 }, 4],
    [{ n: 0 }, 1],
    [{ n: 2.5 }, 1],
  ])('parameters %j is %i call(s)', (parameters, calls) => {
    expect(fanOutOf(request(parameters))).toBe(calls);
  });
});

/** The body as sent: uploads and Data URL views encoded on the way out, its announced length checked. */
async function bodyText(body: unknown): Promise<string> {
  const encoded = encodeJsonWithUploads(body);
  if (typeof encoded.body === 'string') return encoded.body;
  const parts: Buffer[] = [];
  for await (const piece of encoded.body) parts.push(Buffer.from(piece as Buffer | string));
  const text = Buffer.concat(parts);
  expect(text.length).toBe(encoded.length);
  return text.toString('utf8');
}

describe('normalizeGeminiError', () => {
  it.each([
    [400, 'INVALID_ARGUMENT', undefined, 400, 'invalid_request_error'],
    [400, 'INVALID_ARGUMENT', 'API_KEY_INVALID', 502, 'upstream_auth_failed'],
    [401, 'UNAUTHENTICATED', undefined, 502, 'upstream_auth_failed'],
    [403, 'PERMISSION_DENIED', undefined, 502, 'upstream_auth_failed'],
    [400, 'FAILED_PRECONDITION', undefined, 502, 'upstream_quota_exceeded'],
    [404, 'NOT_FOUND', undefined, 502, 'upstream_error'],
    [429, 'RESOURCE_EXHAUSTED', undefined, 429, 'rate_limit_exceeded'],
    [500, 'INTERNAL', undefined, 502, 'upstream_error'],
    [503, 'UNAVAILABLE', undefined, 502, 'upstream_error'],
  ])('%i %s (reason %s) is %i %s', (status, code, reason, callerStatus, callerCode) => {
    const details = reason ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] : undefined;
    const error = normalizeGeminiError(status, { error: { code: status, message: 'said', status: code, ...(details ? { details } : {}) } });
    expect([error.status, error.code]).toEqual([callerStatus, callerCode]);
  });

  it.each([
    [{ 'retry-after': '12' }, undefined, 12],
    [{}, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }], 37],
    [{}, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.2s' }], 2],
    [{}, undefined, undefined],
    [{ 'retry-after': 'soon' }, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '5s' }], 5],
  ])('a 429 with headers %j and details %j waits %s seconds', (headers, details, seconds) => {
    const error = normalizeGeminiError(429, { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED', ...(details ? { details } : {}) } }, headers);
    expect(error.retryAfterSeconds).toBe(seconds);
  });

  it('a 429 with Retry-After as an HTTP date waits until then', () => {
    const error = normalizeGeminiError(429, { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }, { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() });
    // the date has whole seconds: an hour ahead, give or take the second it was cut to
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(3599);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(3601);
  });
});

describe('translateImageResponse', () => {
  const image = (data: string, extra: Record<string, unknown> = {}) => ({ inlineData: { mimeType: 'image/png', data }, ...extra });
  const PNG = TINY_PNG.toString('base64');

  it('answers every image part of every candidate, skipping thought drafts, with the text as revised_prompt', () => {
    const answer = translateImageResponse({
      candidates: [{ content: { parts: [{ text: 'draft', thought: true }, image('DRAFT', { thought: true }), { text: 'final' }, image(PNG)] }, finishReason: 'STOP' }],
      responseId: 'r1',
    });
    expect(translateImageResponse({ candidates: [{ content: { parts: [image(PNG)] } }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 1290 } }).usage).toEqual({
      input_tokens: 7,
      output_tokens: 1290,
    });
    expect(answer).toEqual({ data: [{ url: '', b64_json: PNG, revised_prompt: 'final' }], responseId: 'r1', usage: { input_tokens: 0, output_tokens: 0 } });
  });

  it.each([
    ['a blocked prompt', { promptFeedback: { blockReason: 'SAFETY' } }, 400, 'content_policy_violation'],
    ['an image refused for safety', { candidates: [{ content: { parts: [] }, finishReason: 'IMAGE_SAFETY' }] }, 400, 'content_policy_violation'],
    ['prohibited content', { candidates: [{ finishReason: 'PROHIBITED_CONTENT' }] }, 400, 'content_policy_violation'],
    ['text and no image', { candidates: [{ content: { parts: [{ text: 'no' }] }, finishReason: 'STOP' }] }, 502, 'upstream_no_image'],
    ['no candidates', {}, 502, 'upstream_no_image'],
    ['inlineData that is not base64', { candidates: [{ content: { parts: [image('<html>')] } }] }, 502, 'upstream_bad_response'],
    ['inlineData whose bytes are no image', { candidates: [{ content: { parts: [image(Buffer.from('<html>error</html>').toString('base64'))] } }] }, 502, 'upstream_bad_response'],
  ])('%s is %s %s', (_name, body, status, code) => {
    const error = thrown(() => translateImageResponse(body));
    expect([error.status, error.code]).toEqual([status, code]);
  });
});
