// contract §6.3 and §5.5 at the edge: a video task whose callback_url names a temporary public proxy,
// or hides the caller's key, is a 400 with the spec's error object, and Ark is never called.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startFakeArk } from '../helpers/fake-ark.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const TASKS = '/api/v3/contents/generations/tasks';
const task = (callback_url: string) => ({ model: 'seedance', content: [{ type: 'text', text: 'a cat' }], callback_url });
const encodedKey = encodeURIComponent(KEY_A).replace(/-/g, '%2D');

const gateway = await gatewayWith({
  fakes: { ark: startFakeArk },
  resolve: (_input, { ark }) => ({ provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-operator-key' }),
  callbacks: { blockedHosts: ['hooks.tunnel-vendor.example'] },
  resetEach: true,
});
const { ark } = gateway.fakes;

describe('callback_url policy on task creation', () => {
  it.each([
    ['https://3f2a-203-0-113-9.ngrok-free.app/hooks', 'ngrok'],
    ['https://quiet-river.trycloudflare.com/hooks', 'Cloudflare quick tunnel'],
    ['https://webhook.site/4a1b2c3d-0000-4000-8000-000000000000', 'request bin'],
    ['https://a.hooks.tunnel-vendor.example/x', "the operator's blockedHosts"],
  ])('%s is refused (%s)', async (url) => {
    const res = await request(gateway.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(task(url));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'callback_url names a temporary public proxy (a tunnel or request-bin service such as ngrok, Cloudflare quick tunnels or webhook.site); use your own server-side HTTPS address',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'callback_url',
      },
    });
    expect(ark.requests).toHaveLength(0);
  });

  it.each([
    [`https://hooks.example.com/x%E0?t=${encodedKey}`, 'beside a malformed escape'],
    [`https://hooks.example.com/x?t=${encodedKey.replace(/%/g, '%25')}`, 'double-encoded'],
    [`https://hooks.example.com/x?auth=${Buffer.from(`api:${KEY_A}`).toString('base64')}`, 'as base64("api:" + key)'],
  ])("a URL with the caller's key %s is refused", async (url) => {
    const res = await request(gateway.app).post(TASKS).set('Authorization', `Bearer ${KEY_A}`).send(task(url));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'callback_url must not contain your API key (no keys or secrets in callback URLs)',
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: 'callback_url',
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(KEY_A);
    expect(ark.requests).toHaveLength(0);
  });
});
