// The GET /v1/models walk (docs/models.md): every listed model, on every endpoint it lists, is sent a
// minimal valid request built from its own limits; the walk answers what did not come back 200.
import type express from 'express';
import request from 'supertest';
import type { ModelEntry } from '../../lib/index.js';
import { TINY_PNG, TINY_PNG_DATA_URL } from './images.js';

/** One entry of the GET /v1/models answer, as the walk reads it. */
export interface ListedModel {
  id: string;
  endpoints: string[];
  limits?: ModelEntry['limits'];
  supported_parameters: string[];
  refused_parameters?: string[];
  serving: Record<string, string>;
  streams: boolean;
}

/** The fewest reference images a model takes (an edit uploads at least one). */
function imagesFor(limits: ModelEntry['limits'], edit: boolean): number {
  return Math.max(limits?.reference_images?.min ?? 0, edit ? 1 : 0);
}

/** A minimal valid JSON body of an endpoint for a listed model. */
export function minimalBody(model: Pick<ListedModel, 'id' | 'limits'>, endpoint: string): Record<string, unknown> {
  if (endpoint === '/api/v3/contents/generations/tasks') return { model: model.id, content: [{ type: 'text', text: 'a cat on a roof' }] };
  // OpenAI's video create as JSON (docs/openai-videos.md): the model picks the length and size
  if (endpoint === '/v1/videos') return { model: model.id, prompt: 'a cat on a roof' };
  if (endpoint === '/v1/chat/completions') return { model: model.id, messages: [{ role: 'user', content: 'Hello' }] };
  if (endpoint === '/v1/responses') return { model: model.id, input: 'Hello' };
  const images = imagesFor(model.limits, false);
  if (images === 0) return { model: model.id, prompt: 'a cat on a roof' };
  if (endpoint === '/api/v3/images/generations') return { model: model.id, prompt: 'a cat on a roof', image: TINY_PNG_DATA_URL };
  const content = [...Array.from({ length: images }, () => ({ image: TINY_PNG_DATA_URL })), { text: 'a cat on a roof' }];
  return { model: model.id, prompt: 'placeholder', input: { messages: [{ role: 'user', content }] } };
}

/** Sends one request of an endpoint: the JSON body given (default the minimal one), or the minimal edit form. */
export function sendTo(app: express.Express, key: string, model: Pick<ListedModel, 'id' | 'limits'>, endpoint: string, body: Record<string, unknown> = minimalBody(model, endpoint)): request.Test {
  const auth = { Authorization: `Bearer ${key}` };
  if (endpoint === '/v1/images/edits') {
    let form = request(app).post(endpoint).set(auth).field('model', model.id).field('prompt', 'a cat on a roof');
    for (let index = 0; index < imagesFor(model.limits, true); index += 1) form = form.attach('image[]', TINY_PNG, { filename: `in-${index}.png`, contentType: 'image/png' });
    // the form's own `stream` field, as the walk of streams asks it
    return typeof body.stream === 'boolean' ? form.field('stream', String(body.stream)) : form;
  }
  return request(app).post(endpoint).set(auth).send(body);
}

/** GET /v1/models for the key, then every listed pair once (sent to `appFor`'s app): the models, the pairs, and each failure. */
export async function walkModels(
  app: express.Express,
  key: string,
  appFor: (model: ListedModel) => express.Express = () => app,
): Promise<{ models: ListedModel[]; pairs: number; failures: string[] }> {
  const listed = await request(app).get('/v1/models').set('Authorization', `Bearer ${key}`);
  if (listed.status !== 200) throw new Error(`GET /v1/models answered ${listed.status}`);
  const models = listed.body.data as ListedModel[];
  const failures: string[] = [];
  let pairs = 0;
  for (const model of models) {
    for (const endpoint of model.endpoints) {
      pairs += 1;
      const response = await sendTo(appFor(model), key, model, endpoint);
      if (response.status !== 200) failures.push(`${model.id} ${endpoint}: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
    }
  }
  return { models, pairs, failures };
}

/**
 * The endpoints where `stream: true` may be asked: a model's image generations and chat (docs/models.md
 * `streams`), and the edits of a model listed for edits alone (one that needs an input image).
 */
const STREAMABLE = ['/v1/images/generations', '/v1/chat/completions'];

function streamableOf(model: ListedModel): string[] {
  const endpoints = model.endpoints.filter((endpoint) => STREAMABLE.includes(endpoint));
  return endpoints.length === 0 && model.endpoints.includes('/v1/images/edits') ? ['/v1/images/edits'] : endpoints;
}

/**
 * GET /v1/models, then every listed model on each streamable endpoint it lists with `stream: true` and
 * with `stream: false`: a stream must come back exactly where the listing says `streams: true`, and a
 * JSON answer for `stream: false`. Answers each model whose listing and answers disagree.
 */
export async function walkStreams(app: express.Express, key: string): Promise<{ asked: number; failures: string[] }> {
  const listed = await request(app).get('/v1/models').set('Authorization', `Bearer ${key}`);
  const models = listed.body.data as ListedModel[];
  const failures: string[] = [];
  let asked = 0;
  for (const model of models) {
    const endpoints = streamableOf(model);
    if (endpoints.length === 0 && model.streams) failures.push(`${model.id}: streams: true, but no endpoint it lists takes stream`);
    for (const endpoint of endpoints) {
      asked += 1;
      const streamed = await sendTo(app, key, model, endpoint, { ...minimalBody(model, endpoint), stream: true });
      const isStream = streamed.status === 200 && String(streamed.headers['content-type']).startsWith('text/event-stream') && !/^event: error/m.test(streamed.text);
      if (isStream !== model.streams)
        failures.push(`${model.id} ${endpoint}: streams: ${model.streams}, stream: true answered ${streamed.status} ${String(streamed.headers['content-type'])} ${streamed.text.slice(0, 200)}`);
      const whole = await sendTo(app, key, model, endpoint, { ...minimalBody(model, endpoint), stream: false });
      if (whole.status !== 200 || !String(whole.headers['content-type']).startsWith('application/json'))
        failures.push(`${model.id} ${endpoint}: stream: false answered ${whole.status} ${String(whole.headers['content-type'])}`);
    }
  }
  return { asked, failures };
}
