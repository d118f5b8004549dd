// Azure OpenAI upstreams (docs/providers/azure.md), read by the official openai SDK through the gateway:
// generations and multipart edits at the v1 URL form and at the deployment form (the edit reaches the
// deployment's own edits path), the `api-key` header or a host's Entra token, Azure's errors as the
// gateway's (its 401 never the caller's, its content filter a 400, its 429 with Retry-After), a
// relayed stream, an image task run in the queue, and `/v1/models` listing the gpt-image rows it serves.
import OpenAI, { toFile } from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import type { Upstream } from '../../lib/index.js';
import { AZURE_API_VERSION, AZURE_KEY, AZURE_TEXT, AZURE_TOKEN, type FakeAzure, azureCallOf, azureError, formOf, startFakeAzure } from '../helpers/fake-azure.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { TINY_PNG } from '../helpers/images.js';
import { imageTaskEnded } from '../helpers/image-task-ended.js';

let tokenCalls = 0;

/** Each caller-facing model name is one way of configuring an Azure upstream. */
function azureUpstream(model: string, azure: FakeAzure): Upstream | Upstream[] | null {
  const base = { provider: 'azure' as const, baseURL: azure.endpoint };
  switch (model) {
    // the v1 form: the deployment is named by `model` in the body, as on OpenAI
    case 'gpt-image-1':
      return { ...base, apiKey: AZURE_KEY };
    // the deployment form: `deployment` differs from the model
    case 'az-deployment':
      return { ...base, apiKey: AZURE_KEY, apiVersion: AZURE_API_VERSION, deployment: 'img-prod', model: 'gpt-image-1' };
    // the deployment form, the deployment defaulting to the upstream model
    case 'az-model-deployment':
      return { ...base, apiKey: AZURE_KEY, apiVersion: AZURE_API_VERSION, model: 'gpt-image-1' };
    case 'az-token':
      return {
        ...base,
        apiVersion: AZURE_API_VERSION,
        model: 'gpt-image-1',
        token: () => {
          tokenCalls += 1;
          return Promise.resolve(AZURE_TOKEN);
        },
      };
    case 'az-token-fails':
      return {
        ...base,
        model: 'gpt-image-1',
        token: () => {
          throw new Error('credential chain unavailable');
        },
      };
    case 'az-chat':
      return { ...base, apiKey: AZURE_KEY, apiVersion: AZURE_API_VERSION, deployment: 'chat-prod', model: 'gpt-4.1' };
    case 'az-chat-v1':
      return { ...base, apiKey: AZURE_KEY, model: 'gpt-4.1' };
    // a failing token function first: nothing was sent, so the key upstream is tried
    case 'az-fallback':
      return [azureUpstream('az-token-fails', azure) as Upstream, azureUpstream('az-deployment', azure) as Upstream];
    // a token given as a string, not a function: the operator's mistake, found before any call
    case 'az-token-string':
      return { ...base, model: 'gpt-image-1', token: AZURE_TOKEN as unknown as () => string };
    case 'az-wrong-key':
      return { ...base, apiKey: 'not-the-resource-key', model: 'gpt-image-1' };
    default:
      return null;
  }
}

const gw = await gatewayWith({
  fakes: { azure: startFakeAzure },
  resolve: ({ model }, { azure }) => azureUpstream(model, azure),
  storage: localResultStorage({ directory: tempDir('azure-openai-'), secret: 'azure-openai-results-secret-0123456789' }),
  callbacks: { pollIntervalsMs: { image: [1000] } },
  resetEach: true,
});
const { azure } = gw.fakes;
const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
const png = () => toFile(TINY_PNG, 'in.png', { type: 'image/png' });
const auth = { Authorization: `Bearer ${KEY_A}` };

describe('Azure OpenAI generations and edits through the openai SDK', () => {
  it('v1 form: images.generate answers b64_json; the call went to /openai/v1 with the api-key header and no caller key', async () => {
    const result = await client.images.generate({ model: 'gpt-image-1', prompt: 'a paper crane' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64')).toEqual(TINY_PNG);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.path).toBe('/openai/v1/images/generations');
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toMatchObject({ model: 'gpt-image-1', prompt: 'a paper crane' });
    // what is reported for billing is the paid work the resource started
    expect(gw.usage.at(-1)).toMatchObject({ route: 'images.generations', provider: 'azure', images: azure.started(), status: 200 });
    expect(azure.started()).toBe(1);
  });

  it.each([
    ['az-deployment', 'img-prod'],
    ['az-model-deployment', 'gpt-image-1'],
  ])('deployment form (%s): the deployment path with the api-version query', async (model, deployment) => {
    const result = await client.images.generate({ model, prompt: 'a lantern' });
    expect(result.data).toHaveLength(1);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.path).toBe(`/openai/deployments/${deployment}/images/generations?api-version=${AZURE_API_VERSION}`);
    expect(azureCallOf(sent)).toEqual({ form: 'deployment', deployment, route: 'images/generations', apiVersion: AZURE_API_VERSION });
    expect(sent.json).toMatchObject({ model: 'gpt-image-1' });
  });

  it.each([
    ['az-deployment', `/openai/deployments/img-prod/images/edits?api-version=${AZURE_API_VERSION}`],
    ['gpt-image-1', '/openai/v1/images/edits'],
  ])('images.edit (%s): the multipart form reaches %s, file intact and model renamed', async (model, path) => {
    const result = await client.images.edit({ model, image: await png(), prompt: 'add snow' });
    expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64')).toEqual(TINY_PNG);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.path).toBe(path);
    const form = await formOf(sent);
    expect(form.get('prompt')).toBe('add snow');
    expect(form.get('model')).toBe('gpt-image-1');
    const image = form.get('image') as File;
    expect(Buffer.from(await image.arrayBuffer())).toEqual(TINY_PNG);
  });

  it("a host's token function: asked for each call, sent as Authorization: Bearer, no api-key", async () => {
    const before = tokenCalls;
    await client.images.generate({ model: 'az-token', prompt: 'one' });
    await client.images.generate({ model: 'az-token', prompt: 'two' });
    expect(tokenCalls - before).toBe(2);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${AZURE_TOKEN}`);
    expect(sent.headers['api-key']).toBeUndefined();
    expect(sent.path).toBe(`/openai/deployments/gpt-image-1/images/generations?api-version=${AZURE_API_VERSION}`);
  });
});

describe('chat completions and responses through Azure', () => {
  it.each([
    ['az-chat', `/openai/deployments/chat-prod/chat/completions?api-version=${AZURE_API_VERSION}`],
    ['az-chat-v1', '/openai/v1/chat/completions'],
  ])('chat.completions.create (%s) reaches %s', async (model, path) => {
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toBe(AZURE_TEXT);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.path).toBe(path);
    expect(sent.json).toMatchObject({ model: 'gpt-4.1' });
    expect(sent.headers['api-key']).toBe(AZURE_KEY);
  });

  it.each([
    ['az-chat', `/openai/responses?api-version=${AZURE_API_VERSION}`],
    ['az-chat-v1', '/openai/v1/responses'],
  ])('responses.create (%s) reaches %s', async (model, path) => {
    const response = await client.responses.create({ model, input: 'hi' });
    expect(response.output_text).toBe(AZURE_TEXT);
    expect(azure.apiRequests().at(-1)?.path).toBe(path);
  });
});

describe("Azure's errors as the gateway's", () => {
  it("a token function that throws: 502 upstream_auth_failed, the upstream never called, the host's error not echoed", async () => {
    const error = await client.images.generate({ model: 'az-token-fails', prompt: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
    expect((error as Error).message).not.toContain('credential chain');
    expect(azure.apiRequests()).toHaveLength(0);
  });

  it('a token function that throws, then another upstream: the fallback serves it (the first sent nothing)', async () => {
    const result = await client.images.generate({ model: 'az-fallback', prompt: 'x' });
    expect(result.data).toHaveLength(1);
    expect(azure.apiRequests()).toHaveLength(1);
    expect(azure.apiRequests()[0]?.headers['api-key']).toBe(AZURE_KEY);
  });

  it('a resolver that gives token as a string: 500, Azure not called, the token not echoed', async () => {
    const res = await request(gw.app).post('/v1/images/generations').set(auth).send({ model: 'az-token-string', prompt: 'x' });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
    expect(JSON.stringify(res.body)).not.toContain(AZURE_TOKEN);
    expect(azure.apiRequests()).toHaveLength(0);
  });

  it("Azure's 401 (the resource key refused) is the operator's 502, never the caller's 401", async () => {
    const error = await client.images.generate({ model: 'az-wrong-key', prompt: 'x' }).catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_auth_failed');
    expect((error as Error).message).not.toContain('not-the-resource-key');
    expect(azure.started()).toBe(0);
  });

  it.each([
    [
      'content_policy_violation with ResponsibleAIPolicyViolation inside',
      'content_policy_violation',
      { inner_error: { code: 'ResponsibleAIPolicyViolation', content_filter_results: { violence: { filtered: true, severity: 'high' } } } },
    ],
    ['a bare code with the inner ResponsibleAIPolicyViolation', 'BadRequest', { inner_error: { code: 'ResponsibleAIPolicyViolation' } }],
    ['content_filter', 'content_filter', {}],
  ])('a content filter refusal (%s) is 400 content_policy_violation', async (_name, code, extra) => {
    azure.next((_request, res) => azureError(res, 400, code, 'Your request was rejected as a result of our safety system.', { type: 'invalid_request_error', ...extra }));
    const error = await client.images.generate({ model: 'gpt-image-1', prompt: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('content_policy_violation');
    expect((error as Error).message).toContain('safety system');
  });

  it("Azure's 429 is a 429 with its Retry-After", async () => {
    azure.next((_request, res) => azureError(res, 429, '429', 'Requests to the Images_Generations Operation have exceeded call rate limit. Please retry after 6 seconds.', {}, { 'retry-after': '6' }));
    const res = await request(gw.app).post('/v1/images/generations').set(auth).send({ model: 'gpt-image-1', prompt: 'x' });
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limit_exceeded');
    expect(res.headers['retry-after']).toBe('6');
  });

  it('a deployment Azure does not have (its 404) is the operator mapping: 502 upstream_error', async () => {
    azure.next((_request, res) => azureError(res, 404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.'));
    const res = await request(gw.app).post('/v1/images/generations').set(auth).send({ model: 'az-deployment', prompt: 'x' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_error');
  });
});

describe('streams, image tasks and the model list', () => {
  it('images.generate({ stream: true }) relays the partial image and the completed event', async () => {
    const stream = await client.images.generate({ model: 'az-deployment', prompt: 'a fox', stream: true, partial_images: 1 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    const sent = azure.apiRequests().at(-1)!;
    expect(sent.path).toBe(`/openai/deployments/img-prod/images/generations?api-version=${AZURE_API_VERSION}`);
    expect(sent.json).toMatchObject({ stream: true, partial_images: 1 });
    await expect.poll(() => gw.usage.length).toBe(1);
    expect(gw.usage[0]).toMatchObject({ provider: 'azure', images: azure.started() });
    expect(azure.started()).toBe(1);
  });

  it('images.edit({ stream: true }) relays image_edit events from the deployment edits path', async () => {
    const stream = await client.images.edit({ model: 'az-deployment', image: await png(), prompt: 'add a hat', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_edit.completed']);
    expect(azure.apiRequests().at(-1)?.path).toBe(`/openai/deployments/img-prod/images/edits?api-version=${AZURE_API_VERSION}`);
  });

  it('an image task (Prefer: respond-async) runs in the queue and ends with a stored image', async () => {
    const submitted = await request(gw.url).post('/v1/images/generations').set(auth).set('Prefer', 'respond-async').send({ model: 'az-deployment', prompt: 'a lighthouse' });
    expect(submitted.status).toBe(202);
    const task = await imageTaskEnded(gw.app, String(submitted.body.id), KEY_A);
    expect(task.status).toBe('succeeded');
    const url = String((task.result as { data: Array<{ url: string }> }).data[0]!.url);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer())).toEqual(TINY_PNG);
    expect(azure.started()).toBe(1);
    expect(azure.apiRequests().at(-1)?.path).toBe(`/openai/deployments/img-prod/images/generations?api-version=${AZURE_API_VERSION}`);
  });

  it('GET /v1/models lists the gpt-image row the resolver routes to azure', async () => {
    const res = await request(gw.app).get('/v1/models').set(auth);
    const listed = (res.body.data as Array<{ id: string; endpoints?: string[] }>).find((model) => model.id === 'gpt-image-1');
    expect(listed?.endpoints).toEqual(['/v1/images/generations', '/v1/images/edits']);
  });
});
