// An id a vendor answers is put into the next URL the gateway calls with the operator's key (docs/security.md
// "What an upstream can send"): a lying vendor that answers `..`, a path or a Veo operation name with dot
// segments gets a 502 upstream_bad_response, and the gateway calls nothing more on its host.
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { localResultStorage } from '../../lib/storage.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';

// every request of the fake is recorded; the default answer is a 404 a follow-up call would meet
const fake: FakeUpstream = await startFakeUpstream((_request, res) => sendJson(res, 404, { detail: 'not here' }));
// Veo's videos are kept in the gateway's own storage (docs/providers/gemini.md)
const results = tempDir('vendor-ids-');
afterAll(() => fake.close());

const gw = await gatewayWith({
  fakes: {},
  resolve: ({ model }) => {
    if (model === 'fal-ai/flux/dev') return { provider: 'fal', baseURL: fake.origin, apiKey: 'fal-operator-key', model };
    if (model === 'black-forest-labs/flux-schnell') return { provider: 'replicate', baseURL: `${fake.origin}/v1`, apiKey: 'r8-operator-key', model };
    if (model === 'veo-3.0-generate-001') return { provider: 'gemini', baseURL: `${fake.origin}/v1beta`, apiKey: 'gemini-operator-key', model };
    return null;
  },
  storage: localResultStorage({ directory: results, secret: 'a-results-signing-secret-of-more-than-32-chars' }),
  resetEach: true,
});

const generate = (model: string) => request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model, prompt: 'a lighthouse' });

/** The fake's requests after the first (the submit): none may follow a hostile id. */
const followUps = (before: number): string[] => fake.requests.slice(before + 1).map((recorded) => `${recorded.method} ${recorded.path}`);

describe('ids a vendor answers are checked before any call that uses them', () => {
  it.each([
    ['..', 'a dot segment'],
    ['.', 'the current segment'],
    ['a/../../status', 'a path'],
    ['%2e%2e', 'an encoded dot segment'],
    ['id?x=1', 'a query'],
  ])('a fal request_id of %j (%s) is a 502, and fal is called no more', async (id) => {
    const before = fake.requests.length;
    fake.next((_request, res) => sendJson(res, 200, { request_id: id, status: 'IN_QUEUE' }));
    const res = await generate('fal-ai/flux/dev');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_bad_response');
    expect(followUps(before)).toEqual([]);
  });

  it.each([['..'], ['../v1/account'], ['x y']])('a Replicate prediction id of %j is a 502: no poll, no cancel', async (id) => {
    const before = fake.requests.length;
    fake.next((_request, res) => sendJson(res, 201, { id, status: 'starting', output: null, error: null }));
    const res = await generate('black-forest-labs/flux-schnell');
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('upstream_bad_response');
    expect(followUps(before)).toEqual([]);
  });

  it.each([['../../../../evil'], ['models/veo/operations/../../../evil'], ['operations/op-1'], ['models/veo-3.0-generate-001/operations/..']])(
    'a Veo operation name of %j is a 502 at create: the operation is never read with the key',
    async (name) => {
      const before = fake.requests.length;
      fake.next((_request, res) => sendJson(res, 200, { name }));
      const res = await request(gw.app)
        .post('/api/v3/contents/generations/tasks')
        .set('Authorization', `Bearer ${KEY_A}`)
        .send({ model: 'veo-3.0-generate-001', content: [{ type: 'text', text: 'a lighthouse at dawn' }] });
      expect(res.status).toBe(502);
      expect(res.body.error.code).toBe('upstream_bad_response');
      expect(followUps(before)).toEqual([]);
    },
  );

  it("a vendor's plain ids pass: a fal request is read at its own status path", async () => {
    const before = fake.requests.length;
    fake.next((_request, res) => sendJson(res, 200, { request_id: '0b2f8c6e-1d2a-4c3b-9e8f-7a6b5c4d3e2f', status: 'IN_QUEUE' }));
    await generate('fal-ai/flux/dev');
    expect(followUps(before)[0]).toMatch(/^GET \/fal-ai\/flux\/requests\/0b2f8c6e-1d2a-4c3b-9e8f-7a6b5c4d3e2f\/status/);
  });
});
