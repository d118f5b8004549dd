// The example's routing demo (examples/simulated-routing.ts, docs/routing-and-health.md "In the
// example"): `x-image-2.0` has a flapping upstream and a blocked account before the simulated
// DashScope. With the flapping one down, every request still answers 200, and the log tells the
// traffic moving: the flapping upstream opens for the one demo caller after its five 503s (one
// caller's failures open it for that caller alone), the blocked account for everyone at its first call.
import request from 'supertest';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createExampleApp, type ExampleApp } from '../../examples/server.js';

let example: ExampleApp;
const lines: string[] = [];
const text = (args: unknown[]): string => args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');

beforeAll(async () => {
  // down from the start and for the whole spec
  example = await createExampleApp({ env: { GATEWAY_DEMO_KEY: 'sk-demo-local-only' }, host: '127.0.0.1', routingTiming: { upMs: 0, downMs: 600_000 } });
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(text(args)));
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(text(args)));
});

afterAll(async () => {
  vi.restoreAllMocks();
  await example?.close();
});

it('answers every x-image-2.0 request while its first upstreams fail, and logs the traffic moving', async () => {
  for (let call = 0; call < 7; call++) {
    const answer = await request(example.app).post('/v1/images/generations').set('authorization', 'Bearer sk-demo-local-only').send({ model: 'x-image-2.0', prompt: 'A lighthouse at dawn' });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toHaveLength(1);
  }
  expect(lines).toContain('routing: blocked DashScope account is open (account)');
  expect(lines).toContain('routing: flapping DashScope is open for demo-tenant (caller-failures)');
  // the account refusal is the operator's error line, naming the upstream and never its key
  expect(lines.some((line) => line.startsWith("error: the upstream refused the operator's account"))).toBe(true);
  expect(lines.join('\n')).not.toContain('sk-simulated-upstream');
});
