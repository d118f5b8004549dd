// The tenant identifier sent to vendors (docs/security.md "Tenant identifier sent to vendors"): the
// HMAC of a caller's id is stable, opaque, different per tenant and per secret, within the vendors'
// length limit; each adapter names its vendor's field; a caller's own field gives way to the
// gateway's; a 400 refusing `safety_identifier` is told apart from other 400s.
import { createHmac } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/errors/config-error.js';
import { safetyIdentifierOf } from '../../lib/index.js';
import { SafetyIdentifiers } from '../../lib/security/safety-identifier.js';
import { resolveSafetyIdentifier } from '../../lib/gateway/options/safety-identifier-option.js';
import { type TenantField, withTenantField } from '../../lib/providers/tenant-field.js';
import { openAITenantField, refusesSafetyIdentifier } from '../../lib/providers/openai/openai.js';
import { arkTenantField, toCallerTask, translateCreateTaskRequest } from '../../lib/providers/ark/ark.js';
import { encodeFormBody } from '../../lib/transport/form-body.js';

const SECRET = 'a-test-secret-of-at-least-32-characters';
const OTHER_SECRET = 'another-test-secret-of-32-characters-x';

describe('safetyIdentifierOf', () => {
  it.each<{ name: string; id: string }>([
    { name: 'a plain tenant id', id: 'tenant-a' },
    { name: 'an e-mail address', id: 'owner@example.com' },
    { name: 'an empty id', id: '' },
    { name: 'non-ASCII text', id: 'テナント-é-🙂' },
    { name: 'a 10 000-character id', id: 'x'.repeat(10_000) },
  ])('$name: stable, 32 lower-case hex characters, never the id', ({ id }) => {
    const identifier = safetyIdentifierOf(id, SECRET);
    expect(identifier).toMatch(/^[0-9a-f]{32}$/);
    // OpenAI documents `safety_identifier` as at most 64 characters
    expect(identifier.length).toBeLessThanOrEqual(64);
    expect(safetyIdentifierOf(id, SECRET)).toBe(identifier);
    if (id.length > 0) expect(identifier).not.toContain(id);
    // not a bare HMAC of the id: a secret shared with another HMAC (signed URLs) gives nothing away here
    expect(identifier).not.toBe(createHmac('sha256', SECRET).update(id).digest('hex').slice(0, 32));
  });

  it.each<{ name: string; a: [string, string]; b: [string, string] }>([
    { name: 'two tenants, one secret', a: ['tenant-a', SECRET], b: ['tenant-b', SECRET] },
    { name: 'one tenant, two secrets', a: ['tenant-a', SECRET], b: ['tenant-a', OTHER_SECRET] },
    { name: 'ids that differ only in case', a: ['Tenant-A', SECRET], b: ['tenant-a', SECRET] },
    { name: 'an id and its prefix', a: ['tenant-a', SECRET], b: ['tenant-a1', SECRET] },
  ])('differs: $name', ({ a, b }) => {
    expect(safetyIdentifierOf(...a)).not.toBe(safetyIdentifierOf(...b));
  });
});

describe('SafetyIdentifiers (one per gateway)', () => {
  it('hands out one cached tag per caller, with the identifier of safetyIdentifierOf', () => {
    const identifiers = new SafetyIdentifiers(SECRET);
    const tag = identifiers.tagOf('tenant-a');
    expect(tag.identifier).toBe(safetyIdentifierOf('tenant-a', SECRET));
    expect(identifiers.tagOf('tenant-a')).toBe(tag);
    expect(identifiers.tagOf('tenant-b').identifier).toBe(safetyIdentifierOf('tenant-b', SECRET));
    // the memory of upstreams that want `user` is the gateway's, shared by every caller's tag
    expect(identifiers.tagOf('tenant-b').userFieldUpstreams).toBe(tag.userFieldUpstreams);
  });

  it('keeps at most its bound of callers: the oldest is computed again, to the same value', () => {
    const identifiers = new SafetyIdentifiers(SECRET, 2);
    const first = identifiers.tagOf('tenant-1');
    identifiers.tagOf('tenant-2');
    identifiers.tagOf('tenant-3');
    const again = identifiers.tagOf('tenant-1');
    expect(again).not.toBe(first);
    expect(again.identifier).toBe(first.identifier);
  });
});

describe('resolveSafetyIdentifier', () => {
  it.each<{ name: string; option: unknown; code?: string }>([
    { name: 'absent: off', option: undefined },
    { name: 'false: off', option: false },
    { name: 'a string in place of the object', option: SECRET, code: 'safety_identifier_type' },
    { name: 'a short secret', option: { secret: 'short' }, code: 'safety_identifier_secret' },
    { name: 'no secret', option: {}, code: 'safety_identifier_secret' },
    { name: 'an unknown key', option: { secret: SECRET, field: 'user' }, code: 'safety_identifier_unknown' },
  ])('$name', ({ option, code }) => {
    const resolve = (): unknown => resolveSafetyIdentifier(option as never);
    if (!code) return expect(resolve()).toBeUndefined();
    expect(resolve).toThrow(GatewayConfigError);
    expect(resolve).toThrow(expect.objectContaining({ code }) as Error);
  });

  it('a good secret: the identifiers of that secret', () => {
    expect(resolveSafetyIdentifier({ secret: SECRET })?.tagOf('tenant-a').identifier).toBe(safetyIdentifierOf('tenant-a', SECRET));
  });
});

describe('withTenantField', () => {
  const tag = new SafetyIdentifiers(SECRET).tagOf('tenant-a');
  const id = tag.identifier;
  it.each<{ name: string; body: Record<string, unknown>; on: boolean; field: TenantField | undefined; expected: Record<string, unknown> }>([
    { name: 'option off: the body as it came', body: { model: 'm', user: 'end-user-7' }, on: false, field: 'safety_identifier', expected: { model: 'm', user: 'end-user-7' } },
    { name: 'safety_identifier set', body: { model: 'm' }, on: true, field: 'safety_identifier', expected: { model: 'm', safety_identifier: id } },
    { name: 'user set', body: { model: 'm' }, on: true, field: 'user', expected: { model: 'm', user: id } },
    {
      name: "the caller's own fields give way to the gateway's",
      body: { model: 'm', user: 'tenant-b', safety_identifier: 'someone-else' },
      on: true,
      field: 'safety_identifier',
      expected: { model: 'm', safety_identifier: id },
    },
    { name: 'a vendor with no field: neither field is sent', body: { model: 'm', user: 'alice@example.com', safety_identifier: 'x' }, on: true, field: undefined, expected: { model: 'm' } },
  ])('$name', ({ body, on, field, expected }) => {
    const before = structuredClone(body);
    expect(withTenantField(body, on ? tag : undefined, field)).toStrictEqual(expected);
    expect(body).toStrictEqual(before);
  });
});

describe('the field each OpenAI-compatible vendor documents, per endpoint', () => {
  it.each<{ path: string; openai: TenantField | undefined; ark: TenantField | undefined }>([
    { path: '/chat/completions', openai: 'safety_identifier', ark: 'user' },
    { path: '/responses', openai: 'safety_identifier', ark: undefined },
    { path: '/images/generations', openai: 'user', ark: undefined },
    { path: '/images/edits', openai: 'user', ark: undefined },
    { path: '/videos', openai: undefined, ark: undefined },
  ])('$path', ({ path, openai, ark }) => {
    expect(openAITenantField(path)).toBe(openai);
    expect(arkTenantField(path)).toBe(ark);
  });
});

describe('refusesSafetyIdentifier', () => {
  it.each<{ name: string; status: number; body: unknown; refuses: boolean }>([
    {
      name: "OpenAI's unrecognized argument",
      status: 400,
      body: { error: { message: 'Unrecognized request argument supplied: safety_identifier', type: 'invalid_request_error', param: null, code: null } },
      refuses: true,
    },
    { name: 'param names the field', status: 400, body: { error: { message: 'Invalid parameter', type: 'invalid_request_error', param: 'safety_identifier', code: null } }, refuses: true },
    { name: 'a pydantic server', status: 400, body: { detail: [{ loc: ['body', 'safety_identifier'], msg: 'Extra inputs are not permitted' }] }, refuses: true },
    { name: 'an unknown parameter of another name', status: 400, body: { error: { message: 'Unrecognized request argument supplied: foo', param: null } }, refuses: false },
    {
      name: 'a content refusal that quotes the word',
      status: 400,
      body: { error: { message: 'Your prompt "safety_identifier" was flagged by the safety system', type: 'invalid_request_error', code: 'content_policy_violation', param: null } },
      refuses: false,
    },
    { name: 'another status', status: 422, body: { error: { message: 'Unrecognized request argument supplied: safety_identifier' } }, refuses: false },
    { name: 'a body that is not JSON', status: 400, body: undefined, refuses: false },
  ])('$name: $refuses', ({ status, body, refuses }) => {
    expect(refusesSafetyIdentifier(status, body)).toBe(refuses);
  });
});

describe("Ark's video task", () => {
  const tag = new SafetyIdentifiers(SECRET).tagOf('tenant-a');
  it('the create carries safety_identifier (the caller’s own replaced), no callback_url', () => {
    const body = { model: 'x-video', content: [{ type: 'text', text: 'a cat' }], callback_url: 'https://example.com/cb', safety_identifier: 'tenant-b' };
    expect(translateCreateTaskRequest(body, 'doubao-seedance', tag)).toStrictEqual({ model: 'doubao-seedance', content: body.content, safety_identifier: tag.identifier });
    expect(translateCreateTaskRequest(body, 'doubao-seedance')).toStrictEqual({ model: 'doubao-seedance', content: body.content, safety_identifier: 'tenant-b' });
  });

  it('a task read shows the caller no safety_identifier', () => {
    expect(toCallerTask({ id: 'cgt-1', status: 'running', safety_identifier: tag.identifier }, 'task_1', 'x-video')).toStrictEqual({ id: 'task_1', status: 'running', model: 'x-video' });
  });
});

describe('FormBody.withTextFields', () => {
  it('drops the named text fields, appends the given ones, keeps the files', async () => {
    const file = Buffer.from('file-bytes');
    const form = encodeFormBody([
      { name: 'model', value: 'gpt-image-1' },
      { name: 'user', value: 'tenant-b' },
      { name: 'image', fileName: 'a.png', type: 'image/png', chunks: [file] },
    ]);
    const sent = form.withTextFields(['user', 'safety_identifier'], [{ name: 'user', value: 'abc123' }]);
    const text = (await buffer(sent.open())).toString('latin1');
    expect(text.length).toBe(sent.length);
    expect(text).not.toContain('tenant-b');
    expect(text.match(/name="user"/g)).toHaveLength(1);
    expect(text).toContain('name="user"\r\n\r\nabc123\r\n');
    expect(text).toContain('file-bytes');
    expect(text).toContain('name="model"\r\n\r\ngpt-image-1\r\n');
  });
});
