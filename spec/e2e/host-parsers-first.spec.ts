// A host whose own body parsers come first (docs/getting-started.md "Your parsers first"): wrapped in
// skipGatewayRoutes they leave the gateway's paths alone, at the root or under a prefix, on both
// Express majors; a body a host middleware already consumed is answered at once with the gateway's
// own error object and a line in the operator's log, never a hang or the host's HTML 500.
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Logger, createGatewayRouter, skipGatewayRoutes, staticKeys } from '../../lib/index.js';
import { type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';

let dashscope: FakeDashscope;
beforeAll(async () => {
  dashscope = await startFakeDashscope();
});
afterAll(async () => {
  await dashscope.close();
});

// three ~40 kB Data URLs: over express.json()'s default 100 kB limit together
const dataUrl = `data:image/png;base64,${Buffer.concat([TINY_PNG, Buffer.alloc(30_000)]).toString('base64')}`;
const edit = { model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: dataUrl }, { image: dataUrl }, { image: dataUrl }, { text: 'merge them' }] }] } };

function hostApp(parsers: express.RequestHandler[], mountPath?: string): { app: express.Express; lines: string[]; close(): Promise<void> } {
  const lines: string[] = [];
  const logger: Partial<Logger> = { error: (_fields, message) => lines.push(message) };
  const gateway = createGatewayRouter({
    verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }),
    resolveUpstream: () => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k' }),
    allow: { privateResultUrls: true },
    logger,
  });
  const app = express();
  for (const parser of parsers) app.use(parser);
  app.post('/host/echo', (req, res) => {
    res.json({ echoed: req.body as unknown });
  });
  if (mountPath) app.use(mountPath, gateway);
  else app.use(gateway);
  // the host's own error handler, as most apps have: HTML, status 500 unless the error says otherwise
  app.use((error: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res
      .status(error.status ?? 500)
      .type('html')
      .send('<h1>Something broke</h1>');
  });
  return { app, lines, close: () => gateway.close() };
}

describe('skipGatewayRoutes(express.json())', () => {
  it.each([[undefined], ['/ai']])('leaves the gateway its own body with its own limits (mounted at %s)', async (mountPath) => {
    const host = hostApp([skipGatewayRoutes(express.json(), { mountPath })], mountPath);
    dashscope.requests.length = 0;
    const path = `${mountPath ?? ''}/v1/images/generations`;
    expect(JSON.stringify(edit).length).toBeGreaterThan(110_000);
    const ok = await request(host.app).post(path).set('Authorization', `Bearer ${KEY_A}`).send(edit);
    const echoed = await request(host.app).post('/host/echo').send({ a: 1 });
    // any case, as Express routes it
    const upper = await request(host.app).post(path.toUpperCase()).set('Authorization', `Bearer ${KEY_A}`).send(edit);
    await host.close();
    expect(ok.status).toBe(200);
    expect(upper.status).toBe(200);
    expect(echoed.body).toEqual({ echoed: { a: 1 } });
    expect(dashscope.apiRequests()).toHaveLength(2);
  });

  it('without the wrapper the host parser refuses the same body with its own HTML answer (the layout the recipe replaces)', async () => {
    const host = hostApp([express.json()]);
    const refused = await request(host.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(edit);
    await host.close();
    expect(refused.status).toBe(413);
    expect(refused.type).toBe('text/html');
  });
});

describe('a body a host middleware already read', () => {
  it('JSON routes: text read by express.text() is answered 500 in the gateway shape, and logged', async () => {
    const host = hostApp([express.text({ type: '*/*' })]);
    dashscope.requests.length = 0;
    const res = await request(host.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ model: 'x-image-2.0', prompt: 'a fox' }));
    await host.close();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: {
        message:
          'The server read the request body before the gateway could, so the request was not processed. This is a server configuration problem, not a problem with the request: tell the operator.',
        type: 'server_error',
        code: 'internal_error',
        param: null,
      },
    });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(host.lines[0]).toMatch(/^a host middleware read the request body before the gateway/);
    expect(dashscope.apiRequests()).toHaveLength(0);
  });

  it('JSON routes: a stream read to its end with nothing left in req.body is answered, not waited for', async () => {
    const drain: express.RequestHandler = (req, _res, next) => {
      req.on('end', () => next());
      req.resume();
    };
    const host = hostApp([drain]);
    const res = await request(host.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0', prompt: 'a fox' });
    await host.close();
    expect(res.status).toBe(500);
    expect((res.body as { error: { code: string } }).error.code).toBe('internal_error');
  });

  it('the multipart route: a form read by express.raw() is answered 500 in the gateway shape', async () => {
    const host = hostApp([express.raw({ type: 'multipart/form-data' })]);
    const res = await request(host.app).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`).field('model', 'x-image-edit').field('prompt', 'snow').attach('image', TINY_PNG, 'a.png');
    await host.close();
    expect(res.status).toBe(500);
    expect((res.body as { error: { code: string } }).error.code).toBe('internal_error');
    expect(host.lines[0]).toMatch(/^a host middleware read the request body before the gateway/);
  });
});
