// GET /v1/models (docs/routes.md): the OpenAI list shape, authenticated like every route, from the
// `listModels(caller)` hook or by default from the model catalogue as the resolver routes it; and unserved
// paths under /v1 and /api/v3 answering the JSON error object (404 not_found), unless `allow.fallthrough`.
import OpenAI from 'openai';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError, createGatewayRouter, staticKeys, type ResolveUpstreamInput } from '../../lib/index.js';
import { toModelObjects } from '../../lib/express/routes/list-models.js';
import { KEY_A, KEY_B, createTestGateway, listen } from '../helpers/gateway-app.js';

const upstream = { provider: 'dashscope' as const, baseURL: 'http://127.0.0.1:9/api/v1', apiKey: 'k' };

describe('GET /v1/models', () => {
  it('lists, by default, the catalogue entries the resolver routes for this caller, with the endpoints it routes', async () => {
    const asked: ResolveUpstreamInput[] = [];
    const gw = createTestGateway({
      resolveUpstream: (input) => {
        asked.push(input);
        if (!input.model.startsWith('x-image-')) return null;
        // tenant-a may not use x-image-max, nor edit with x-image-2.0; tenant-b may use nothing but x-image-2.0
        if (input.caller.id === 'tenant-a') return input.model === 'x-image-max' || (input.model === 'x-image-2.0' && input.route === 'images.edits') ? null : upstream;
        return input.model === 'x-image-2.0' ? upstream : null;
      },
    });
    const a = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    const b = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_B}`);
    await gw.close();
    const endpointsOf = (body: { data: Array<{ id: string; endpoints: string[] }> }) => body.data.map((model) => [model.id, model.endpoints]);
    expect(a.status).toBe(200);
    expect(endpointsOf(a.body)).toEqual([
      ['x-image-2.0', ['/v1/images/generations']],
      ['x-image-plus', ['/v1/images/generations']],
      // an edit-only model is listed for edits alone: a prompt alone makes nothing of it
      ['x-image-edit', ['/v1/images/edits']],
    ]);
    expect(a.body.data[0]).toEqual({
      id: 'x-image-2.0',
      object: 'model',
      created: 0,
      owned_by: 'dashscope',
      endpoints: ['/v1/images/generations'],
      serving: { '/v1/images/generations': 'translated' },
      supported_parameters: [
        'prompt',
        'input',
        'response_format',
        'size',
        'n',
        'parameters.size',
        'parameters.n',
        'parameters.watermark',
        'parameters.prompt_extend',
        'parameters.negative_prompt',
        'parameters.seed',
      ],
      limits: { n: { min: 1, max: 6 }, reference_images: { min: 0, max: 3 } },
      streams: true,
    });
    expect(endpointsOf(b.body)).toEqual([['x-image-2.0', ['/v1/images/generations', '/v1/images/edits']]]);
    expect(new Set(asked.map((input) => input.route))).toEqual(new Set(['images.generations', 'images.edits', 'images.native', 'video.tasks']));
  });

  it('answers what listModels(caller) returns, and the official SDK reads it', async () => {
    const gw = createTestGateway({
      resolveUpstream: () => upstream,
      models: { list: (caller) => (caller.id === 'tenant-a' ? ['x-image-2.0', { id: 'x-video', owned_by: 'ark', created: 1700000000 }, 'x-image-2.0', ''] : []) },
    });
    const server = await listen(gw.app);
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY_A });
      const models = [];
      for await (const model of client.models.list()) models.push(model);
      // a name the catalogue knows is described (here routed on both image endpoints); one no row
      // describes gets the endpoints its upstream serves (DashScope: the image, chat and responses routes, no video tasks)
      expect(models).toEqual([
        expect.objectContaining({ id: 'x-image-2.0', object: 'model', created: 0, owned_by: 'gateway', endpoints: ['/v1/images/generations', '/v1/images/edits'], streams: true }),
        {
          id: 'x-video',
          object: 'model',
          created: 1700000000,
          owned_by: 'ark',
          endpoints: ['/v1/images/generations', '/v1/images/edits', '/api/v3/images/generations', '/v1/chat/completions', '/v1/responses'],
        },
      ]);
      const other = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_B}`);
      expect(other.body).toEqual({ object: 'list', data: [] });
    } finally {
      await server.close();
      await gw.close();
    }
  });

  it('is authenticated like every route: no key is a 401 and the hook is not called', async () => {
    let calls = 0;
    const gw = createTestGateway({ resolveUpstream: () => upstream, models: { list: () => ((calls += 1), ['x']) } });
    const response = await request(gw.app).get('/v1/models');
    await gw.close();
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: { message: expect.stringContaining('Missing API key'), type: 'authentication_error', code: 'invalid_api_key', param: null } });
    expect(calls).toBe(0);
  });

  it('a listModels that throws is a 500 error object, details only in the log', async () => {
    const logged: string[] = [];
    const gw = createTestGateway({
      resolveUpstream: () => upstream,
      models: {
        list: () => {
          throw new Error('catalogue database down');
        },
      },
      logger: { error: (_fields, message: string) => logged.push(message) },
    });
    const response = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    await gw.close();
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: { message: 'Internal gateway error.', type: 'server_error', code: 'internal_error', param: null } });
    expect(logged).toContain('listModels threw; answering 500');
  });

  it('a resolver that throws for one name leaves that name out of the default list', async () => {
    const gw = createTestGateway({
      resolveUpstream: ({ model }) => {
        if (model === 'x-image-plus') throw new Error('boom');
        return model.startsWith('x-image-') ? upstream : null;
      },
    });
    const response = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    await gw.close();
    expect(response.body.data.map((model: { id: string }) => model.id)).toEqual(['x-image-2.0', 'x-image-max', 'x-image-edit']);
  });
});

describe('toModelObjects', () => {
  it.each([
    [
      'plain names',
      ['a', 'b'],
      [
        { id: 'a', object: 'model', created: 0, owned_by: 'gateway' },
        { id: 'b', object: 'model', created: 0, owned_by: 'gateway' },
      ],
    ],
    ['objects keep owned_by and created', [{ id: 'v', owned_by: 'ark', created: 5 }], [{ id: 'v', object: 'model', created: 5, owned_by: 'ark' }]],
    ['duplicates and blanks dropped', ['a', '', 'a', { id: '' }], [{ id: 'a', object: 'model', created: 0, owned_by: 'gateway' }]],
    ['bad created and owner fall back', [{ id: 'x', created: 1.5, owned_by: '' }], [{ id: 'x', object: 'model', created: 0, owned_by: 'gateway' }]],
    ['not a list', null, []],
  ])('%s', (_name, input, expected) => {
    expect(toModelObjects(input as Parameters<typeof toModelObjects>[0])).toEqual(expected);
  });
});

describe('unserved paths under the gateway prefixes', () => {
  it.each([
    ['GET', '/v1/unknown'],
    ['POST', '/v1/unknown'],
    ['GET', '/v1/images/generations'],
    ['DELETE', '/v1/models'],
    ['GET', '/api/v3/unknown'],
    ['PUT', '/api/v3/contents/generations/tasks'],
    ['GET', '/v1'],
  ])('%s %s is the JSON error object, 404 not_found', async (method, path) => {
    const gw = createTestGateway({ resolveUpstream: () => upstream });
    const agent = request(gw.app)[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path);
    const response = await agent;
    await gw.close();
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      error: { message: `No route ${method} ${path}. Check the method and the path; GET /v1/models lists the models your key may use.`, type: 'invalid_request_error', code: 'not_found', param: null },
    });
  });

  it('names the path as the client sent it under a mount prefix, and leaves paths outside the prefixes to the host', async () => {
    const gw = createTestGateway({ mountPath: '/ai', resolveUpstream: () => upstream });
    const unknown = await request(gw.app).get('/ai/v1/unknown?x=1');
    const host = await request(gw.app).get('/host/ping');
    const outside = await request(gw.app).get('/ai/other');
    await gw.close();
    expect(unknown.body.error.message).toBe('No route GET /ai/v1/unknown. Check the method and the path; GET /ai/v1/models lists the models your key may use.');
    expect(host.body).toEqual({ host: 'pong' });
    // not under /v1 or /api/v3: Express's own 404, the host's business
    expect(outside.status).toBe(404);
    expect(outside.headers['content-type']).toMatch(/^text\/html/);
  });

  it('with fallthrough: true, they reach the host routes mounted after the gateway', async () => {
    const gw = createTestGateway({ resolveUpstream: () => upstream, allow: { fallthrough: true } });
    gw.app.get('/v1/status', (_req, res) => {
      res.json({ host: 'status' });
    });
    const status = await request(gw.app).get('/v1/status');
    const models = await request(gw.app).get('/v1/models').set('Authorization', `Bearer ${KEY_A}`);
    await gw.close();
    expect(status.body).toEqual({ host: 'status' });
    // the gateway's own routes are served either way
    expect(models.body.object).toBe('list');
  });

  it.each([
    ['models.list', { models: { list: ['x-image-2.0'] } }, /models\.list must be a function/],
    ['allow.fallthrough', { allow: { fallthrough: 'yes' } }, /allow\.fallthrough must be a boolean/],
  ])('a wrong %s fails at creation with the fix', (_name, extra, message) => {
    const create = () => createGatewayRouter({ verifyKey: staticKeys({ k: 'a' }), resolveUpstream: () => null, ...(extra as object) });
    expect(create).toThrow(GatewayConfigError);
    expect(create).toThrow(message);
    expect(create).toThrow(/Fix: /);
  });
});
