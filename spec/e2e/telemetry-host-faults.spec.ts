// A host's telemetry pipeline that throws (a span processor or a metric view with a bug) is the host's
// bug, but it must not crash the process from the gateway's 'close' handler nor turn an answered
// request into a failure: the gateway's calls into the API are guarded like its calls to onUsage.
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { afterAll, expect, it } from 'vitest';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

let ended = 0;
let throwOnStart = false;
const throwing: SpanProcessor = {
  onStart: () => {
    if (throwOnStart) throw new Error('a host span processor that fails at start');
  },
  onEnd: () => {
    ended += 1;
    throw new Error('a host span processor with a bug');
  },
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
const provider = new BasicTracerProvider({ spanProcessors: [throwing] });
trace.setGlobalTracerProvider(provider);
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  metrics.disable();
});

const errors: Array<{ fields: unknown; message: string }> = [];
const gateway = await gatewayWith({
  fakes: { llm: startFakeLlm },
  resolve: (_input, { llm }) => ({ provider: 'openai', baseURL: llm.baseURL, apiKey: 'sk-up' }),
  logger: { info: () => undefined, warn: () => undefined, error: (fields, message) => void errors.push({ fields, message }) },
});

it('a span processor that throws: the request is answered, the usage event still comes, nothing crashes', async () => {
  const before = gateway.usage.length;
  const res = await request(gateway.app)
    .post('/v1/chat/completions')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'm', messages: [{ role: 'user', content: 'a' }] });
  expect(res.status).toBe(200);
  await expect.poll(() => gateway.usage.length).toBe(before + 1);
  expect(ended).toBeGreaterThanOrEqual(2);
  expect(errors.filter((entry) => /OpenTelemetry pipeline threw/.test(entry.message))).toHaveLength(1);
});

it('a span processor that throws at start: the request is still answered by the upstream', async () => {
  throwOnStart = true;
  try {
    const res = await request(gateway.app)
      .post('/v1/chat/completions')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ model: 'm', messages: [{ role: 'user', content: 'a' }] });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Hello there');
  } finally {
    throwOnStart = false;
  }
});
