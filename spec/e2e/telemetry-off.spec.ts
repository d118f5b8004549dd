// Telemetry when the host has none (docs/observability.md "Traces and metrics"): with `@opentelemetry/api` installed but
// no SDK registered the gateway works, sends no `traceparent` and, once warm, starts no span at all,
// yet finds an SDK registered later; `telemetry: false` emits nothing even into an SDK registered
// later; a wrong `telemetry` option is a GatewayConfigError with a fix.
import * as otel from '@opentelemetry/api';
import request from 'supertest';
import { describe, expect, it, onTestFinished } from 'vitest';
import { GatewayConfigError, type GatewayOptions, createGatewayRouter } from '../../lib/index.js';
import { startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { registerOtelSdk } from '../helpers/otel-sdk.js';

const gateway = await gatewayWith({
  fakes: { dashscope: startFakeDashscope },
  resolve: (_input, { dashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'sk-upstream-off-0123456789' }),
  resetEach: true,
});
const { dashscope } = gateway.fakes;
const off = gateway.variant({ telemetry: false });

/** The real API, with the spans started on the tracer the gateway asks for counted: a spy, nothing replaced. */
function countingApi(): { api: typeof otel; started: () => number } {
  let started = 0;
  const trace = Object.create(otel.trace) as typeof otel.trace;
  trace.getTracer = (name, version) => {
    const tracer = otel.trace.getTracer(name, version);
    return Object.assign(Object.create(tracer) as otel.Tracer, {
      startSpan: (...args: Parameters<otel.Tracer['startSpan']>) => {
        started += 1;
        return tracer.startSpan(...args);
      },
    });
  };
  return { api: { ...otel, trace }, started: () => started };
}

const generate = (app = gateway.app) =>
  request(app)
    .post('/v1/images/generations')
    .set('Authorization', `Bearer ${KEY_A}`)
    .send({ model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a fox' }] }] } });

describe('no SDK registered', () => {
  it('serves requests and sends no traceparent upstream', async () => {
    const res = await generate();
    expect(res.status).toBe(200);
    expect(dashscope.apiRequests()).toHaveLength(1);
    expect(dashscope.apiRequests()[0]?.headers.traceparent).toBeUndefined();
  });
});

describe('telemetry: false', () => {
  it('emits nothing into a registered SDK, while the default gateway does', async () => {
    // registered here, after the routers were made (the test above ran without it)
    const sdk = registerOtelSdk();
    onTestFinished(() => sdk.shutdown());
    expect((await generate(off.app)).status).toBe(200);
    expect(dashscope.apiRequests()[0]?.headers.traceparent).toBeUndefined();
    expect(sdk.spans()).toEqual([]);
    expect(await sdk.collect()).toEqual([]);

    // the same request through the default gateway: the SDK registered after the router was made is found
    expect((await generate()).status).toBe(200);
    expect(dashscope.apiRequests()[1]?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await sdk.waitFor((spans) => (spans.length >= 2 ? true : undefined));
    expect((await sdk.collect()).map((metric) => metric.descriptor.name)).toContain('image_gateway.request.duration');
  });
});

// after the test above: an SDK's shutdown resets the API's global proxy (trace.disable()), which
// a router made before it never sees again; this one makes its router after it
describe('no SDK registered, then one registered', () => {
  it('starts no span for a warm request, and spans the next request once an SDK is registered', async () => {
    const counting = countingApi();
    const { app } = gateway.variant({ telemetry: { api: counting.api } });
    // the first request finds the metric instruments to be the API's no-op ones
    expect((await generate(app)).status).toBe(200);
    const warm = counting.started();
    expect((await generate(app)).status).toBe(200);
    expect(counting.started()).toBe(warm);

    const sdk = registerOtelSdk();
    onTestFinished(() => sdk.shutdown());
    expect((await generate(app)).status).toBe(200);
    // the request's server span and its upstream attempt's client span
    expect(counting.started()).toBe(warm + 2);
    await sdk.waitFor((spans) => (spans.length >= 2 ? true : undefined));
    expect((await sdk.collect()).map((metric) => metric.descriptor.name)).toContain('image_gateway.request.duration');
  });
});

describe('telemetry option errors', () => {
  const base: GatewayOptions = { verifyKey: () => null, resolveUpstream: () => null };
  it.each<[string, unknown, string]>([
    ['not an object', 'yes', 'telemetry_type'],
    ['an unknown key', { sampleRate: 1 }, 'telemetry_unknown'],
    ['capturePrompts not a boolean', { capturePrompts: 'yes' }, 'telemetry_value'],
    ['api not the API module', { api: { trace: {} } }, 'telemetry_api'],
  ])('%s', (_name, telemetry, code) => {
    let caught: unknown;
    try {
      createGatewayRouter({ ...base, telemetry } as GatewayOptions);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GatewayConfigError);
    expect((caught as GatewayConfigError).code).toBe(code);
    expect((caught as Error).message).toContain('Fix:');
  });
});
