// The host's middleware after authentication (docs/configuration.md "tenancy.afterAuthentication"): it runs
// on every gateway route once the key was accepted, sees the caller, runs before the body is read,
// and whatever it refuses with (next(error), a throw, a rejected promise, an http-errors error) is
// answered in the gateway's error shape, on both Express majors; the upstream is never called then.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { type AuthenticatedMiddleware, GatewayConfigError, GatewayError, createGatewayRouter, gatewayCaller, staticKeys } from '../../lib/index.js';
import { type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { KEY_A, KEY_B } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

const body = { model: 'x-image-2.0', prompt: 'a fox' };

async function withMiddleware(afterAuthentication: AuthenticatedMiddleware | AuthenticatedMiddleware[]) {
  return gatewayWith({
    fakes: { dashscope: startFakeDashscope },
    resolve: (_input, { dashscope }: { dashscope: FakeDashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k' }),
    tenancy: { afterAuthentication },
  });
}

describe('tenancy.afterAuthentication', () => {
  it('runs in order with the caller known, on every gateway route, and not for a request without a key', async () => {
    const seen: string[] = [];
    const gw = await withMiddleware([
      (req, res, next) => {
        seen.push(`first ${gatewayCaller(res)?.id} ${req.method} ${req.path}`);
        next();
      },
      (_req, _res, next) => {
        seen.push('second');
        next();
      },
    ]);
    const models = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_B}`);
    const image = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    const anonymous = await request(gw.app).post('/v1/images/generations').send(body);
    expect([models.status, image.status, anonymous.status]).toEqual([200, 200, 401]);
    expect(seen).toEqual(['first tenant-b GET /v1/models', 'second', 'first tenant-a POST /v1/images/generations', 'second']);
  });

  it("lets a host's own finish and close listeners read the caller, and lets go of the request once they ran", async () => {
    const seen: string[] = [];
    const afterwards: Array<string | undefined> = [];
    const gw = await withMiddleware((_req, res, next) => {
      res.on('finish', () => seen.push(`finish ${gatewayCaller(res)?.id}`));
      res.on('close', () => {
        seen.push(`close ${gatewayCaller(res)?.id}`);
        // a done request's context is released after the listeners: nothing of it outlives the request
        setImmediate(() => afterwards.push(gatewayCaller(res)?.id));
      });
      next();
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(res.status).toBe(200);
    await expect.poll(() => afterwards.length).toBe(1);
    expect(afterwards).toEqual([undefined]);
    expect(seen).toEqual(['finish tenant-a', 'close tenant-a']);
  });

  it('goes on once: a middleware that calls next() and then fails is logged, and the request runs to its answer', async () => {
    const logged: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (fields: Record<string, unknown>, message: string) => logged.push(`${String(fields.error)}: ${message}`) };
    const gw = await gatewayWith({
      fakes: { dashscope: startFakeDashscope },
      resolve: (_input, { dashscope }: { dashscope: FakeDashscope }) => ({ provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'k' }),
      logger,
      tenancy: {
        afterAuthentication: async function audit(_req, _res, next) {
          next();
          await Promise.resolve();
          throw new Error('the audit write failed');
        },
      },
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(res.status).toBe(200);
    expect(gw.fakes.dashscope.apiRequests()).toHaveLength(1);
    expect(gw.usage).toHaveLength(1);
    expect(gw.usage[0]).toMatchObject({ status: 200, images: 1 });
    expect(logged).toEqual([expect.stringMatching(/^the audit write failed: an afterAuthentication middleware went on to the gateway and then failed/)]);
  });

  it('runs before the body is read: a refusal leaves the body unread and calls no upstream', async () => {
    let bodyAtRefusal: unknown = 'not seen';
    const gw = await withMiddleware((req, _res, next) => {
      bodyAtRefusal = req.body;
      next(GatewayError.permissionDenied('Your plan does not include image generation.'));
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { message: 'Your plan does not include image generation.', type: 'permission_error', code: 'permission_denied', param: null } });
    expect(bodyAtRefusal).toBeUndefined();
    expect(gw.fakes.dashscope.apiRequests()).toHaveLength(0);
  });

  it.each([
    [
      'GatewayError.rateLimited through next()',
      ((_req, _res, next) => next(GatewayError.rateLimited('Your plan allows 60 requests a minute.', 12.2))) as AuthenticatedMiddleware,
      429,
      { message: 'Your plan allows 60 requests a minute.', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
      '13',
    ],
    [
      'an http-errors 429 with an exposed message and Retry-After',
      ((_req, _res, next) => next(Object.assign(new Error('Slow down'), { status: 429, expose: true, headers: { 'retry-after': '30' } }))) as AuthenticatedMiddleware,
      429,
      { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
      '30',
    ],
    [
      'an http-errors 403 whose message is not exposed',
      ((_req, _res, next) => next(Object.assign(new Error('internal plan id 7 lacks images'), { status: 403 }))) as AuthenticatedMiddleware,
      403,
      { message: 'The request is not allowed.', type: 'permission_error', code: 'permission_denied', param: null },
      undefined,
    ],
    [
      'a throw',
      (() => {
        throw new Error('audit log down');
      }) as AuthenticatedMiddleware,
      500,
      { message: 'Internal gateway error.', type: 'server_error', code: 'internal_error', param: null },
      undefined,
    ],
    [
      'a rejected promise (an async middleware, which Express 4 does not catch)',
      (async () => {
        await Promise.resolve();
        throw new Error('plan lookup failed');
      }) as AuthenticatedMiddleware,
      500,
      { message: 'Internal gateway error.', type: 'server_error', code: 'internal_error', param: null },
      undefined,
    ],
  ])('%s is answered in the gateway shape', async (_name, middleware, status, error, retryAfter) => {
    const gw = await withMiddleware(middleware);
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send(body);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error });
    expect(res.headers['retry-after']).toBe(retryAfter);
    expect(gw.fakes.dashscope.apiRequests()).toHaveLength(0);
  });

  it('refuses anything but middleware at creation, with the fix', () => {
    const make = (value: unknown) => () =>
      createGatewayRouter({ verifyKey: staticKeys({ [KEY_A]: { id: 'a' } }), resolveUpstream: () => null, logger: false, tenancy: { afterAuthentication: value as AuthenticatedMiddleware } });
    for (const value of ['rateLimit', [() => undefined, 1], { handle: () => undefined }]) {
      expect(make(value)).toThrow(GatewayConfigError);
      expect(make(value)).toThrow(/tenancy\.afterAuthentication must be a middleware/);
    }
  });

  it('refuses the middleware at the top level, naming its place under tenancy', () => {
    const middleware: AuthenticatedMiddleware = (_req, _res, next) => next();
    const make = () => createGatewayRouter({ verifyKey: staticKeys({ [KEY_A]: { id: 'a' } }), resolveUpstream: () => null, logger: false, ...({ afterAuthentication: middleware } as object) });
    expect(make).toThrow(
      expect.objectContaining({ code: 'option_moved', message: expect.stringMatching(/^Option 'afterAuthentication' is now tenancy\.afterAuthentication\.\nFix: tenancy: \{ afterAuthentication: /) }),
    );
  });
});
