// Model names as metric labels (docs/observability.md "Metrics"): one tenant's invented names, even
// ones the upstream answers (a pass-through resolver), take at most its own few slots, so the
// operator's configured models and other tenants' models keep their own label; the rest is `_OTHER`.
// The real OpenTelemetry SDK in-process, fakes on port 0.
import type { MetricData } from '@opentelemetry/sdk-metrics';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeDashscope } from '../helpers/fake-dashscope.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { registerOtelSdk } from '../helpers/otel-sdk.js';

const SDK = registerOtelSdk();
afterAll(() => SDK.shutdown());

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope, llm: startFakeLlm },
  resolve: ({ model }, { dashscope, llm }) => {
    if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k', model: 'qwen-image-2.0' };
    // a pass-through resolver: any name goes upstream as it is, and this upstream answers them all
    return { provider: 'openai', baseURL: llm.baseURL, apiKey: 'k' };
  },
});

/** Every `gen_ai.request.model` value in the collected metrics. */
function modelLabels(all: MetricData[]): Set<string> {
  const found = new Set<string>();
  for (const metric of all) for (const point of metric.dataPoints) if (typeof point.attributes['gen_ai.request.model'] === 'string') found.add(point.attributes['gen_ai.request.model']);
  return found;
}

describe('model labels one tenant cannot exhaust', () => {
  it('150 invented names of one tenant take 10 labels; a configured model and another tenant model keep theirs', async () => {
    for (let index = 0; index < 150; index += 1) {
      const res = await request(gateway.app)
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: `invented-${index}`, messages: [{ role: 'user', content: 'a' }] });
      expect(res.status).toBe(200);
    }
    const image = await request(gateway.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'a fox' });
    expect(image.status).toBe(200);
    const other = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'tenant-b-model', messages: [{ role: 'user', content: 'a' }] });
    expect(other.status).toBe(200);

    const labels = modelLabels(await SDK.collect());
    expect([...labels].filter((label) => label.startsWith('invented-'))).toHaveLength(10);
    expect(labels.has('_OTHER')).toBe(true);
    // the operator's mapping (the upstream's name) and the configured family name
    expect(labels.has('qwen-image-2.0')).toBe(true);
    expect(labels.has('x-image-2.0')).toBe(true);
    expect(labels.has('tenant-b-model')).toBe(true);
  }, 60_000);

  it("a resolver that passes the caller's name on as the upstream model does not make invented names the operator's", async () => {
    const passing = await gatewayWith({
      fakes: { llm: startFakeLlm },
      // `{ ...upstream, model }`: every name the caller invents reaches the upstream as its model
      resolve: ({ model }, { llm }) => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: 'k', model }),
    });
    for (let index = 0; index < 150; index += 1) {
      const res = await request(passing.app)
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: `passed-${index}`, messages: [{ role: 'user', content: 'a' }] });
      expect(res.status).toBe(200);
    }
    const other = await request(passing.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_B}`)
      .send({ model: 'tenant-b-real-model', messages: [{ role: 'user', content: 'a' }] });
    expect(other.status).toBe(200);
    const labels = modelLabels(await SDK.collect());
    // one tenant's text takes its own ten slots, and the other tenant's model still has its label
    expect([...labels].filter((label) => label.startsWith('passed-'))).toHaveLength(10);
    expect(labels.has('tenant-b-real-model')).toBe(true);
  }, 60_000);
});
