// What routing tells through OpenTelemetry (docs/routing-and-health.md "Operator signals"): each
// attempt span says how its upstream was chosen (`gateway.upstream.selected_by`) and which open
// upstreams were passed over (`gateway.upstream.skipped`); each state change counts once in
// `image_gateway.upstream.health_changes`. The real SDK with in-memory exporters.
import request from 'supertest';
import { afterAll, expect, it } from 'vitest';
import { chatCompletion, startFakeLlm } from '../helpers/fake-llm.js';
import { sendJson } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { registerOtelSdk, totalOf } from '../helpers/otel-sdk.js';

const SDK = registerOtelSdk();
afterAll(() => SDK.shutdown());

it('attempt spans carry selected_by and the skipped upstreams; the account block counts once in the metric', async () => {
  const gateway = await gatewayWith({
    fakes: { a: startFakeLlm, b: startFakeLlm },
    resolve: (_input, { a, b }) => [
      { provider: 'openai', baseURL: a.baseURL, apiKey: 'sk-operator-a', model: 'up-chat' },
      { provider: 'openai', baseURL: b.baseURL, apiKey: 'sk-operator-b', model: 'up-chat' },
    ],
    routing: {},
  });
  const { a, b } = gateway.fakes;
  const chat = () =>
    request(gateway.app)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${KEY_A}`)
      .send({ model: 'x-chat', messages: [{ role: 'user', content: 'hi' }] });
  a.next((_request, res) => sendJson(res, 403, { error: { message: 'account disabled', type: 'invalid_request_error', param: null, code: null } }));
  expect((await chat()).status).toBe(200);
  b.next((recorded, res) => sendJson(res, 200, chatCompletion(String((recorded.json as { model: string }).model), 'second')));
  expect((await chat()).status).toBe(200);

  const attempts = await SDK.waitFor((spans) => {
    const found = spans.filter((span) => span.attributes['gateway.upstream.selected_by'] !== undefined);
    return found.length >= 3 ? found : undefined;
  });
  expect(attempts.map((span) => span.attributes['gateway.upstream.selected_by'])).toEqual(['ordered', 'fallback', 'ordered']);
  expect(attempts[2]!.attributes['gateway.upstream.skipped']).toBe(`openai ${a.baseURL}`);
  expect(attempts[0]!.attributes['gateway.upstream.skipped']).toBeUndefined();

  const metrics = await SDK.collect();
  expect(totalOf(metrics, 'image_gateway.upstream.health_changes', { 'image_gateway.upstream.state': 'open', 'image_gateway.upstream.reason': 'account' })).toBe(1);
});
