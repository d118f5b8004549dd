// Mounting the router into a host app (issue: mounting, options, close, usage): root and prefix
// mounts, fall-through to host routes, a host express.json() in front, bad options at creation.
import { createRequire } from 'node:module';
import express from 'express';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayRouter, GatewayConfigError, gatewayCaller, type ResolveUpstreamInput, staticKeys } from '../../lib/index.js';
import { type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A, KEY_B, createTestGateway } from '../helpers/gateway-app.js';

let dashscope: FakeDashscope;
const body = { model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a fox' }] }] } };

beforeAll(async () => {
  dashscope = await startFakeDashscope();
});
afterAll(async () => {
  await dashscope.close();
});
afterEach(() => {
  dashscope.requests.length = 0;
});

const route = () => ({ provider: 'dashscope' as const, baseURL: dashscope.baseURL, apiKey: 'k' });

describe('the Express major under test', () => {
  it('is the one GATEWAY_EXPRESS names', () => {
    // vitest.config.ts aliases `express` to `express4` when GATEWAY_EXPRESS=4; this proves it took
    const version = (createRequire(import.meta.url)('express/package.json') as { version: string }).version;
    const aliased = typeof (express as unknown as { query?: unknown }).query === 'function';
    expect(aliased).toBe(process.env.GATEWAY_EXPRESS === '4');
    expect(version.startsWith('5.')).toBe(true); // node's own resolution is unaffected by the alias
  });
});

describe('mounting', () => {
  it('serves under a prefix, and not at the root then', async () => {
    const gw = createTestGateway({ mountPath: '/gw', resolveUpstream: route });
    const ok = await request(gw.app).post('/gw/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    const root = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    await gw.close();
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(1);
    expect(root.status).toBe(404);
    expect(root.body).toEqual({});
  });

  // the routes match as Express routes do: any case, one trailing slash, query strings ignored, under
  // a prefix too; a second trailing slash or another path is not a route
  it.each([
    ['/gw/v1/images/generations/', 200],
    ['/gw/V1/Images/Generations', 200],
    ['/gw/v1/images/generations?x=1', 200],
    ['/gw/v1/images/generations//', 404],
    ['/gw/v1/images/generationsx', 404],
  ])('routes POST %s as an Express route would (%i)', async (path, status) => {
    const gw = createTestGateway({ mountPath: '/gw', resolveUpstream: route });
    const answer = await request(gw.app).post(path).set('Authorization', `Bearer ${KEY_A}`).send(body);
    await gw.close();
    expect(answer.status).toBe(status);
    expect(dashscope.requests).toHaveLength(status === 200 ? 1 : 0);
  });

  // the gateway's routes inside a host Router under a prefix: its errors in the gateway's shape, and
  // every other request still through the router (the GET routes, the JSON 404, what the host hangs on it)
  it('answers its POST routes, their errors and its other paths when nested in a host Router under a prefix', async () => {
    const router = createGatewayRouter({ verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' } }), resolveUpstream: route });
    const seen: string[] = [];
    router.use('/extra', (req, res) => {
      seen.push(`${req.method} ${req.baseUrl}`);
      res.json({ host: 'extra' });
    });
    const hostRouter = express.Router();
    hostRouter.use('/ai', router);
    const app = express();
    app.use('/api', hostRouter);
    const ok = await request(app).post('/api/ai/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    const invalid = await request(app).post('/api/ai/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ prompt: 'x' });
    const refused = await request(app).post('/api/ai/v1/chat/completions').set('Authorization', 'Bearer nope').send({});
    const models = await request(app).get('/api/ai/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    const unknown = await request(app).post('/api/ai/v1/unknown').set('Authorization', `Bearer ${KEY_A}`).send({});
    const extra = await request(app).post('/api/ai/extra').send({});
    await router.close();
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(1);
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.param).toBe('model');
    expect(refused.status).toBe(401);
    expect(refused.body.error.type).toBe('authentication_error');
    expect(models.status).toBe(200);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect(extra.body).toEqual({ host: 'extra' });
    expect(seen).toEqual(['POST /api/ai/extra']);
  });

  it('with fallthrough: true, lets paths and methods it does not serve fall through to the host', async () => {
    const gw = createTestGateway({ resolveUpstream: route, allow: { fallthrough: true } });
    gw.app.get('/v1/images/generations', (_req, res) => {
      res.json({ host: 'get handled by host' });
    });
    const host = await request(gw.app).get('/host/ping');
    const method = await request(gw.app).get('/v1/images/generations');
    const unknown = await request(gw.app).post('/v1/unknown').send({});
    await gw.close();
    expect(host.body).toEqual({ host: 'pong' });
    expect(method.body).toEqual({ host: 'get handled by host' });
    expect(unknown.status).toBe(404);
    expect(dashscope.requests).toHaveLength(0);
  });

  it('works behind a host express.json() that already parsed the body', async () => {
    const gw = createTestGateway({ hostJson: true, resolveUpstream: route });
    const ok = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    const missing = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ prompt: 'x' });
    await gw.close();
    expect(ok.status).toBe(200);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: { message: 'model is required', type: 'invalid_request_error', code: 'invalid_request_error', param: 'model' } });
  });

  it('does not answer errors of host routes', async () => {
    const gw = createTestGateway({ resolveUpstream: route });
    gw.app.get('/host/boom', () => {
      throw new Error('host failure');
    });
    gw.app.use((_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).send('host error page');
    });
    const res = await request(gw.app).get('/host/boom');
    await gw.close();
    expect(res.text).toBe('host error page');
  });
});

describe('the caller', () => {
  it('reaches resolveUpstream and the host (gatewayCaller(res))', async () => {
    const seen: Array<Pick<ResolveUpstreamInput, 'model' | 'route'> & { caller: unknown }> = [];
    const router = createGatewayRouter({
      verifyKey: staticKeys({ [KEY_B]: { id: 'tenant-b', plan: 'pro' } }),
      resolveUpstream: ({ model, route: name, caller }) => {
        seen.push({ model, route: name, caller });
        return route();
      },
    });
    const app = express();
    let hostSaw: unknown;
    app.use((_req, res, next) => {
      res.on('finish', () => (hostSaw = gatewayCaller(res)));
      next();
    });
    app.use(router);
    const res = await request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send(body);
    await router.close();
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ model: 'x-image-2.0', route: 'images.generations', caller: { id: 'tenant-b', plan: 'pro' } }]);
    expect(hostSaw).toEqual({ id: 'tenant-b', plan: 'pro' });
  });

  it("leaves the host's own res.locals keys alone, and is undefined where the gateway did not authenticate", async () => {
    const router = createGatewayRouter({ verifyKey: staticKeys({ [KEY_B]: { id: 'tenant-b' } }), resolveUpstream: route });
    const app = express();
    const seen: Array<{ path: string; locals: Record<string, unknown>; caller: unknown }> = [];
    app.use((req, res, next) => {
      // the names the gateway used to write (caller, gateway), taken by the host's own middleware
      res.locals.caller = 'host caller';
      res.locals.gateway = 'host gateway';
      res.on('finish', () => seen.push({ path: req.path, locals: { ...res.locals }, caller: gatewayCaller(res) }));
      next();
    });
    app.use(router);
    app.get('/host', (_req, res) => {
      res.send('host');
    });
    const ok = await request(app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_B}`).send(body);
    const refused = await request(app).post('/v1/images/generations').set('Authorization', 'Bearer nope').send(body);
    const host = await request(app).get('/host');
    await router.close();
    expect([ok.status, refused.status, host.status]).toEqual([200, 401, 200]);
    const hostLocals = { caller: 'host caller', gateway: 'host gateway' };
    expect(seen).toEqual([
      { path: '/v1/images/generations', locals: hostLocals, caller: { id: 'tenant-b' } },
      { path: '/v1/images/generations', locals: hostLocals, caller: undefined },
      { path: '/host', locals: hostLocals, caller: undefined },
    ]);
  });

  it('onUsage gets one event per finished request', async () => {
    const gw = createTestGateway({ resolveUpstream: route });
    await request(gw.app)
      .post('/v1/images/generations')
      .set('Authorization', `Bearer ${KEY_A}`)
      .send({ ...body, parameters: { n: 2 } });
    await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'x-image-2.0' });
    await request(gw.app).post('/v1/images/generations').set('Authorization', 'Bearer nope').send(body);
    await gw.close();
    expect(gw.usage).toEqual([
      {
        caller: { id: 'tenant-a' },
        route: 'images.generations',
        model: 'x-image-2.0',
        provider: 'dashscope',
        images: 2,
        upstreamImages: 2,
        status: 200,
        latencyMs: expect.any(Number),
        upstreamRequestId: expect.stringMatching(/^ds-req-/),
        // DashScope's usage { width, height, image_count }: each image's size
        imageSizes: ['1664x928', '1664x928'],
        upstreamUsage: { height: 928, image_count: 2, width: 1664 },
        vendorWork: { images: 2, attempts: [{ provider: 'dashscope', id: expect.stringMatching(/^ds-req-/) as string, images: 2, outcome: 'made' }] },
      },
      {
        caller: { id: 'tenant-a' },
        route: 'images.generations',
        model: 'x-image-2.0',
        provider: undefined,
        images: 0,
        status: 400,
        latencyMs: expect.any(Number),
        upstreamRequestId: undefined,
        errorCode: 'invalid_request_error',
      },
    ]);
  });
});

describe('options', () => {
  const valid = { verifyKey: staticKeys({ k: 'a' }), resolveUpstream: () => null };
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /needs an options object/],
    ['no verifyKey', { resolveUpstream: valid.resolveUpstream }, /verifyKey must be a function/],
    ['no resolveUpstream', { verifyKey: valid.verifyKey }, /resolveUpstream must be a function/],
    ['a typo', { ...valid, limit: {} }, /Unknown option 'limit'/],
    ['an unknown limit', { ...valid, limits: { bodyBytes: 1 } }, /Unknown limit 'bodyBytes'/],
    ['a negative limit', { ...valid, limits: { jsonBodyBytes: -1 } }, /limits.jsonBodyBytes must be a positive integer/],
    ['a bad family', { ...valid, imageModels: [{ pattern: '*', minImages: 0, maxImages: 3, maxN: 1 }] }, /imageModels\[0\].pattern/],
  ];
  it.each(cases)('%s throws a GatewayConfigError that shows the fix', (_name, options, message) => {
    let thrown: unknown;
    try {
      createGatewayRouter(options as Parameters<typeof createGatewayRouter>[0]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayConfigError);
    expect((thrown as Error).message).toMatch(message);
    expect((thrown as Error).message).toContain('Fix: ');
  });

  it('imageModels replaces the family table', async () => {
    const gw = createTestGateway({ resolveUpstream: route, imageModels: [{ pattern: 'x-image-2.0*', minImages: 1, maxImages: 1, maxN: 1 }] });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    await gw.close();
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("Model 'x-image-2.0' edits images: send 1 to 1 image items and one text item (got 0 images)");
  });

  it('close() can be called twice', async () => {
    const gw = createTestGateway({ resolveUpstream: route });
    await gw.close();
    await expect(gw.close()).resolves.toBeUndefined();
  });
});
