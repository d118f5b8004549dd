// An image task's traces (docs/image-tasks.md "What is charged"; docs/observability.md): the submit is
// the request's SERVER span; the run, in the background, is an INTERNAL span of a trace of its own that
// is LINKED to the submit's, and the upstream attempt is the run's child. The real OpenTelemetry SDK.
import { SpanKind } from '@opentelemetry/api';
import request from 'supertest';
import { afterAll, expect, it } from 'vitest';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { registerOtelSdk } from '../helpers/otel-sdk.js';

const SDK = registerOtelSdk();
afterAll(() => SDK.shutdown());

it("the run's span is linked to the submit's, and the upstream attempt is the run's child", async () => {
  const gw = await gatewayWith({
    fakes: { images: startFakePaidImages },
    resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-up', model: 'qwen-image-2.0' }),
  });
  const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).set('Prefer', 'respond-async').send({ model: 'x-image-2.0', prompt: 'traced' });
  expect(res.status).toBe(202);
  const submit = await SDK.waitFor((spans) => spans.find((span) => span.kind === SpanKind.SERVER && span.attributes['image_gateway.route'] === 'images.generations'));
  const run = await SDK.waitFor((spans) => spans.find((span) => span.name === 'image task x-image-2.0'));
  expect(run.kind).toBe(SpanKind.INTERNAL);
  expect(run.spanContext().traceId).not.toBe(submit.spanContext().traceId);
  expect(run.links.map((link) => link.context.spanId)).toContain(submit.spanContext().spanId);
  const attempt = await SDK.waitFor((spans) => spans.find((span) => span.kind === SpanKind.CLIENT && span.parentSpanContext?.spanId === run.spanContext().spanId));
  expect(attempt.attributes['gen_ai.provider.name']).toBeDefined();
});
