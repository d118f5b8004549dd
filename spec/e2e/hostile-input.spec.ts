// Hostile input on every route: fuzzed JSON bodies, forms and task ids (fast-check), targeted attacks (prototype pollution, deep nesting, huge and malformed bodies, duplicate headers, path injection through model names) and keys that must never leak.
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderName, type Upstream, staticKeys } from '../../lib/index.js';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/callback-receiver.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { DASHSCOPE_PATH, type FakeDashscope, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { type FakeUpstream, type RecordedRequest, type Responder, sendJson, startFakeUpstream } from '../helpers/fake-upstream.js';
import { KEY_A, KEY_B, type TestGateway, createTestGateway, listen } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { PUBLIC_IMAGE_URL, TINY_GIF, TINY_JPEG, TINY_PNG, TINY_PNG_DATA_URL } from '../helpers/images.js';
import { type RawClient, type RawResponse, rawClient } from '../helpers/raw-client.js';

// ---------------------------------------------------------------------------------------------
// Secrets and fixtures
// ---------------------------------------------------------------------------------------------

const OPERATOR_KEY = 'sk-operator-SECRET-123';
const VOLC_ACCESS_KEY_ID = 'AKLT-operator-access-key-id';
const VOLC_SECRET_ACCESS_KEY = 'volc-SECRET-access-key-456';
const WRONG_KEY = 'sk-wrong-caller-key-LEAKCHECK-4242';
const THROW_KEY_PLAIN = 'sk-verifier-throws-plain-7777';
const THROW_KEY_QUOTED = 'sk-verifier-throws-quoted-8888';
const SECRETS: ReadonlyArray<[string, string]> = [
  ['KEY_A', KEY_A],
  ['KEY_B', KEY_B],
  ['the wrong key sent', WRONG_KEY],
  ['the key whose check throws', THROW_KEY_PLAIN],
  ['the key whose check throws (quoted)', THROW_KEY_QUOTED],
  ['the operator upstream key', OPERATOR_KEY],
  ['the Volcengine secretAccessKey', VOLC_SECRET_ACCESS_KEY],
];

const TASKS = '/api/v3/contents/generations/tasks';
const STACK_MARKERS = ['    at ', '.ts:', 'node_modules'];
/** Statuses that mean "refused before anything was sent upstream". */
const NO_UPSTREAM = new Set([400, 404, 413, 415]);

type Json = Record<string, unknown>;

const VALID: Readonly<Record<string, readonly Json[]>> = {
  '/v1/images/generations': [
    {
      model: 'x-image-2.0',
      prompt: 'placeholder',
      input: { messages: [{ role: 'user', content: [{ image: PUBLIC_IMAGE_URL }, { text: 'a cat on a bicycle' }] }] },
      parameters: { size: '1024*1024', n: 1, watermark: false, prompt_extend: true, negative_prompt: 'blurry', seed: 42 },
      response_format: 'url',
    },
    { model: 'x-image-edit', prompt: 'placeholder', input: { messages: [{ role: 'user', content: [{ image: TINY_PNG_DATA_URL }, { text: 'make it night' }] }] } },
    { model: 'gpt-image-1', prompt: 'a lighthouse at dawn', size: '1024x1024', n: 1, quality: 'high' },
  ],
  '/v1/chat/completions': [
    {
      model: 'chat-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      temperature: 0.2,
      max_tokens: 16,
    },
  ],
  '/v1/responses': [
    { model: 'resp-model', input: 'hello', instructions: 'be brief' },
    { model: 'resp-model', input: [{ role: 'user', content: 'hello' }] },
  ],
  '/api/v3/images/generations': [{ model: 'seedream', prompt: 'a cat', image: [PUBLIC_IMAGE_URL], size: '2K', response_format: 'url', watermark: false }],
  [TASKS]: [
    {
      model: 'seedance',
      content: [
        { type: 'text', text: 'a cat runs' },
        { type: 'image_url', image_url: { url: PUBLIC_IMAGE_URL }, role: 'first_frame' },
      ],
      ratio: '16:9',
      duration: 5,
      watermark: false,
      safety_identifier: 'u-1',
    },
  ],
  '/api/v3/open/CreateAsset': [{ GroupId: 'group-1', URL: 'https://media.example.com/girl.png', AssetType: 'Image', Name: 'girl', ProjectName: 'default' }],
};
const JSON_ROUTES = Object.keys(VALID);
/** Model names each route can route (so arbitrary objects carrying one get past the resolver). */
const ROUTABLE_MODELS: Readonly<Record<string, readonly string[]>> = {
  '/v1/images/generations': ['x-image-2.0', 'x-image-edit', 'x-image-max', 'x-image-plus', 'x-other', 'gpt-image-1'],
  '/v1/chat/completions': ['chat-model'],
  '/v1/responses': ['resp-model'],
  '/api/v3/images/generations': ['seedream'],
  [TASKS]: ['seedance'],
  '/api/v3/open/CreateAsset': ['Image'],
};

// ---------------------------------------------------------------------------------------------
// Checks shared by every test
// ---------------------------------------------------------------------------------------------

/** The contract §2.5 object, exactly: `{ error: { message, type, code, param? } }`, served as JSON. */
function expectErrorObject(res: Pick<RawResponse, 'status' | 'headers' | 'text'>): void {
  const context = `${res.status} ${res.text.slice(0, 300)}`;
  expect(res.headers['content-type'], context).toMatch(/^application\/json/);
  let body: unknown;
  expect(() => (body = JSON.parse(res.text)), context).not.toThrow();
  expect(Object.keys(body as object), context).toEqual(['error']);
  const error = (body as { error: Record<string, unknown> }).error;
  expect(typeof error, context).toBe('object');
  expect(
    Object.keys(error).every((key) => ['message', 'type', 'code', 'param'].includes(key)),
    context,
  ).toBe(true);
  expect(typeof error.message, context).toBe('string');
  expect(error.message, context).not.toBe('');
  expect(error.type, context).toMatch(/^[a-z_]+$/);
  expect(error.code, context).toMatch(/^[a-z_]+$/);
  // always present: a string naming the field, or null (docs/errors.md)
  expect(error.param === null || typeof error.param === 'string', context).toBe(true);
  expect('param' in error, context).toBe(true);
}

/**
 * The fuzz properties for one answer: never 500 (a 5xx only as 502/504 after a real upstream call),
 * the exact error object on every failure, no stack trace (markers the request itself carried are
 * echoes, not traces), and nothing sent upstream for a request refused with 400/404/413/415.
 */
function checkAnswer(res: Pick<RawResponse, 'status' | 'headers' | 'text'>, upstreamCalls: number, sent: string): void {
  const context = `${res.status} ${res.text.slice(0, 300)}`;
  expect(res.status, context).not.toBe(500);
  if (res.status >= 500) {
    expect([502, 504], context).toContain(res.status);
    expect(upstreamCalls, `${context}: a ${res.status} although no upstream was called`).toBeGreaterThan(0);
  }
  if (res.status >= 400) expectErrorObject(res);
  for (const marker of STACK_MARKERS) {
    if (!sent.includes(marker)) expect(res.text, `${context}: stack trace marker ${JSON.stringify(marker)}`).not.toContain(marker);
  }
  if (NO_UPSTREAM.has(res.status)) expect(upstreamCalls, `${context}: the upstream was called for a refused request`).toBe(0);
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

type Path = ReadonlyArray<string | number>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...prefix, index])));
  else if (isObject(value)) for (const key of Object.keys(value)) paths.push(...pathsOf(value[key], [...prefix, key]));
  return paths;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], value);
}

/** A copy of `root` with `edit` applied to the container of `path`'s last step (own properties only). */
function editAt(root: Json, path: Path, edit: (container: Record<string | number, unknown> | unknown[], key: string | number) => void): Json {
  const copy = structuredClone(root);
  const container = getAt(copy, path.slice(0, -1)) as Record<string | number, unknown> | unknown[];
  edit(container, path[path.length - 1]!);
  return copy;
}

const defineOwn = (target: object, key: string | number, value: unknown): void => {
  // defineProperty, not assignment: a '__proto__' key must become an own property, as JSON.parse makes it
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
};

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\r\n',
  '\ud800',
  '../../etc/passwd',
  '%2F..%2F',
  'http://',
  'https://',
  'https://[',
  'http://[::1',
  'https://%',
  'http://127.0.0.1/a.png',
  'http://169.254.169.254/latest/meta-data/',
  'https://localhost/a.png',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'data:',
  'data:image/png;base64,',
  'data:image/png;base64,!!!!',
  'data:image/png,rawbytes',
  'data:text/plain;base64,aGVsbG8=',
  TINY_PNG_DATA_URL,
  'asset://',
  'asset://asset-20260320120147-00001',
  `task_${'A'.repeat(22)}`,
  'x-image-2.0',
  'x-image-edit',
  'x-image-max',
  'gpt-image-1',
  '1024x1024',
  '1024*1024',
  '0*0',
  '99999*99999',
  'b64_json',
  'url',
  'user',
  'assistant',
  'text',
  'image_url',
  'video_url',
  'draft_task',
  'Image',
  'Video',
  '__proto__',
  'constructor',
  '$ref',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '%s%n%x',
  'a'.repeat(3000),
];
const hostileString = fc.constantFrom(...HOSTILE_STRINGS);
const hostileNumber = fc.constantFrom(0, -0, -1, 1, 1.5, 7, 2147483648, Number.MAX_SAFE_INTEGER, 1e21, 1e308, -1e308, 5e-324);
const arbitraryValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileString,
  hostileNumber,
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(null, true, false, [], {}, [null], [{}], { '': '' }),
);
const extraKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '', ' ', 'stream', 'images', 'callback_url', 'model', 'n', 'size'), fc.string({ maxLength: 12 }));

function mutatedValue(original: unknown): fc.Arbitrary<unknown> {
  const options: Array<fc.Arbitrary<unknown>> = [arbitraryValue];
  if (typeof original === 'string' && /^https?:\/\//.test(original)) {
    // URL fields: keep the scheme the schema asks for, break the rest
    const scheme = original.slice(0, original.indexOf('//') + 2);
    options.push(
      fc.string({ maxLength: 8 }).map((rest) => scheme + rest),
      fc.constantFrom(
        `${scheme}`,
        `${scheme}[`,
        `${scheme}[::1`,
        `${scheme}%`,
        `${scheme} `,
        `${scheme}a b`,
        `${scheme}:80`,
        `${scheme}user:pw@host/a.png`,
        `${scheme}127.0.0.1/a.png`,
        `${scheme}[::1]/a.png`,
      ),
    );
  }
  if (typeof original === 'string') {
    options.push(
      fc.string({ maxLength: 12 }).map((suffix) => original + suffix),
      fc.string({ maxLength: 12 }).map((prefix) => prefix + original),
      fc.nat({ max: original.length }).map((end) => original.slice(0, end)),
      fc.constantFrom(original.toUpperCase(), ` ${original} `, `${original}\u0000`, original.repeat(40)),
    );
  }
  if (typeof original === 'number') options.push(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), hostileNumber);
  if (Array.isArray(original)) options.push(fc.constantFrom([], original.slice(1), [...original, ...original, ...original, ...original]));
  return fc.oneof(...options);
}

/** A valid body of the route with one change: a value replaced, a key deleted, or a key added. */
function nearValidBody(valids: readonly Json[]): fc.Arbitrary<Json> {
  return fc.constantFrom(...valids).chain((valid) => {
    const paths = pathsOf(valid);
    const containers: Path[] = [[], ...paths.filter((path) => typeof getAt(valid, path) === 'object' && getAt(valid, path) !== null)];
    const replace = fc.constantFrom(...paths).chain((path) => mutatedValue(getAt(valid, path)).map((value) => editAt(valid, path, (container, key) => defineOwn(container, key, value))));
    const remove = fc.constantFrom(...paths).map((path) =>
      editAt(valid, path, (container, key) => {
        if (Array.isArray(container)) container.splice(Number(key), 1);
        else delete container[key];
      }),
    );
    const add = fc.tuple(fc.constantFrom(...containers), extraKey, arbitraryValue).map(([path, key, value]) => {
      const copy = structuredClone(valid);
      const container = getAt(copy, path) as Json | unknown[];
      if (Array.isArray(container)) container.push(value);
      else defineOwn(container, key, value);
      return copy;
    });
    return fc.oneof({ weight: 6, arbitrary: replace }, { weight: 2, arbitrary: remove }, { weight: 2, arbitrary: add });
  });
}

function jsonOrUndefined(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // BigInt and the like: not JSON
  }
}

/** JSON text of arbitrary values: fc.object / fc.anything, and arbitrary objects carrying a routable model. */
function arbitraryObjectText(route: string): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.anything({ maxDepth: 3 }),
      fc.object({ maxDepth: 3 }),
      fc.tuple(fc.constantFrom(...ROUTABLE_MODELS[route]!), fc.object({ maxDepth: 3 })).map(([model, object]) => ({ ...object, model })),
    )
    .map(jsonOrUndefined)
    .filter((text): text is string => text !== undefined);
}

// multipart
type Part = { kind: 'field'; name: string; value: string } | { kind: 'file'; name: string; bytes: Buffer; filename: string };

const FIELD_NAMES = [
  'model',
  'prompt',
  'n',
  'size',
  'response_format',
  'watermark',
  'prompt_extend',
  'negative_prompt',
  'seed',
  'quality',
  'image',
  'image[]',
  'mask',
  'model[]',
  'model[a]',
  'prompt[0]',
  '__proto__',
  '__proto__[polluted]',
  'constructor[prototype][polluted]',
  'a[b][c]',
  '[]',
  '[0]',
  'image[__proto__]',
];
const FIELD_VALUES = [
  'x-image-edit',
  'x-image-2.0',
  'x-image-max',
  'gpt-image-1',
  'make it night',
  '1',
  '0',
  '-1',
  '7',
  '1e3',
  'true',
  'false',
  'TRUE',
  '1024x1024',
  '1024*1024',
  'b64_json',
  'url',
  '',
];
const FILE_FIELDS = ['image', 'image[]', 'image[0]', 'image[1]', 'image[7]', 'image[99999999999999999999]', 'image[-1]', 'image[a]', 'mask', 'file', 'images', 'model', 'prompt'];
const fieldPart: fc.Arbitrary<Part> = fc.record({
  kind: fc.constant('field' as const),
  name: fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string({ minLength: 1, maxLength: 24 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 12 })),
  value: fc.oneof(
    { weight: 10, arbitrary: fc.oneof(fc.constantFrom(...FIELD_VALUES), fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 })) },
    // over the 256 KiB field limit
    { weight: 1, arbitrary: fc.constant('p'.repeat(300 * 1024)) },
  ),
});
const filePart: fc.Arbitrary<Part> = fc.record({
  kind: fc.constant('file' as const),
  name: fc.oneof(fc.constantFrom(...FILE_FIELDS), fc.string({ minLength: 1, maxLength: 16 })),
  bytes: fc.oneof(
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(TINY_PNG, TINY_JPEG, TINY_GIF, Buffer.alloc(0)),
    // a real image signature followed by garbage
    fc.uint8Array({ maxLength: 32 }).map((tail) => Buffer.concat([TINY_PNG.subarray(0, 16), Buffer.from(tail)])),
  ),
  filename: fc.oneof(fc.constantFrom('a.png', '../../etc/passwd', 'x"y.png', '図.png', 'a;b=c.png', '.png'), fc.string({ minLength: 1, maxLength: 16 })),
});
const anyPart = fc.oneof(fieldPart, filePart);

const field = (name: string, value: string): Part => ({ kind: 'field', name, value });
const file = (name: string, bytes: Buffer, filename = 'in.png'): Part => ({ kind: 'file', name, bytes, filename });
const VALID_FORMS: readonly Part[][] = [
  [field('model', 'x-image-edit'), field('prompt', 'make it night'), file('image', TINY_PNG)],
  [
    field('model', 'x-image-2.0'),
    field('prompt', 'merge them'),
    file('image[]', TINY_PNG, 'a.png'),
    file('image[]', TINY_JPEG, 'b.jpg'),
    field('size', '1024x1024'),
    field('n', '1'),
    field('watermark', 'false'),
  ],
  [field('model', 'gpt-image-1'), field('prompt', 'add a hat'), file('image', TINY_PNG), file('mask', TINY_PNG, 'mask.png'), field('size', '1024x1024')],
];

function nearValidForm(): fc.Arbitrary<Part[]> {
  return fc.constantFrom(...VALID_FORMS).chain((valid) => {
    const index = fc.nat({ max: valid.length - 1 });
    return fc.oneof(
      index.map((at) => valid.filter((_, i) => i !== at)),
      fc.tuple(index, anyPart).map(([at, part]) => valid.map((old, i) => (i === at ? part : old))),
      fc.tuple(fc.nat({ max: valid.length }), anyPart).map(([at, part]) => [...valid.slice(0, at), part, ...valid.slice(at)]),
      index.map((at) => [...valid.slice(0, at + 1), valid[at]!, ...valid.slice(at + 1)]),
      fc
        .tuple(index, fc.string({ maxLength: 20 }), hostileString)
        .map(([at, text, hostile]) => valid.map((old, i) => (i === at && old.kind === 'field' ? { ...old, value: `${old.value}${text}${hostile}` } : old))),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The fuzzed gateway: every route in front of fakes that answer success
// ---------------------------------------------------------------------------------------------

let assets = 0;

const fakes = (): FakeUpstream[] => [dashscope, openai, llm, ark, openapi];
const upstreamCount = (): number => fakes().reduce((count, fake) => count + fake.requests.length, 0);
const lastRequest = (fake: FakeUpstream): RecordedRequest | undefined => fake.requests[fake.requests.length - 1];

function fuzzResolver({ model, route }: { model: string; route: string }): Upstream | null {
  switch (route) {
    case 'images.generations':
    case 'images.edits':
      if (model.startsWith('gpt-')) return { provider: 'openai', baseURL: openai.baseURL, apiKey: OPERATOR_KEY };
      if (model.startsWith('x-')) return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: OPERATOR_KEY };
      return null;
    case 'chat.completions':
    case 'responses':
      return { provider: 'openai', baseURL: llm.baseURL, apiKey: OPERATOR_KEY };
    case 'images.native':
      return { provider: 'ark', baseURL: `${llm.origin}/api/v3`, apiKey: OPERATOR_KEY };
    case 'video.tasks':
      return { provider: 'ark', baseURL: ark.baseURL, apiKey: OPERATOR_KEY };
    case 'assets':
      return { provider: 'ark', baseURL: openapi.origin, accessKeyId: VOLC_ACCESS_KEY_ID, secretAccessKey: VOLC_SECRET_ACCESS_KEY };
    default:
      return null;
  }
}

const gateway = await gatewayWith({
  fakes: {
    dashscope: startFakeDashscope,
    openai: startFakeOpenAI,
    llm: async () => {
      const llm = await startFakeLlm();
      llm.chunkDelayMs = 1;
      return llm;
    },
    ark: startFakeArk,
    openapi: () =>
      startFakeUpstream((_req, res) => {
        assets += 1;
        sendJson(res, 200, { ResponseMetadata: { RequestId: `r-${assets}`, Action: 'CreateAsset', Version: '2024-01-01' }, Result: { Id: `asset-fuzz-${assets}` } });
      }),
  },
  resolve: fuzzResolver,
});
const { dashscope, openai, llm, ark, openapi } = gateway.fakes;
const client: RawClient = rawClient(gateway.url);
afterAll(() => client.close());

/** Drops what the fakes recorded (the fuzz runs send thousands of requests; some are large). */
function forgetRequests(): void {
  for (const fake of fakes()) fake.requests.length = 0;
}

async function postJson(path: string, body: string | Buffer, headers: Record<string, string | string[] | undefined> = {}): Promise<{ res: RawResponse; calls: number }> {
  const before = upstreamCount();
  const res = await client.send({ path, body, headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', ...headers } });
  return { res, calls: upstreamCount() - before };
}

async function postForm(parts: readonly Part[]): Promise<{ res: RawResponse; calls: number }> {
  const before = upstreamCount();
  let req = request(gateway.url).post('/v1/images/edits').set('Authorization', `Bearer ${KEY_A}`);
  for (const part of parts) req = part.kind === 'field' ? req.field(part.name, part.value) : req.attach(part.name, part.bytes, part.filename);
  const res = await req;
  return { res: { status: res.status, headers: res.headers, text: res.text, ms: 0 }, calls: upstreamCount() - before };
}

describe('the fuzzed gateway answers valid requests on every route', () => {
  const cases = JSON_ROUTES.flatMap((path) => VALID[path]!.map((body, index) => [path, index, body] as const));
  it.each(cases)('%s valid body #%i: 200', async (path, _index, body) => {
    const { res, calls } = await postJson(path, JSON.stringify(body));
    expect(res.status, res.text).toBe(200);
    expect(calls).toBeGreaterThan(0);
  });

  it.each(VALID_FORMS.map((form, index) => [index, form] as const))('/v1/images/edits valid form #%i: 200', async (_index, form) => {
    const { res, calls } = await postForm(form);
    expect(res.status, res.text).toBe(200);
    expect(calls).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------------------------
// 1. Property-based
// ---------------------------------------------------------------------------------------------

describe('property: arbitrary JSON bodies on every JSON route', () => {
  for (const path of JSON_ROUTES) {
    it(`${path}: arbitrary JSON values (fc.json)`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.json({ maxDepth: 4 }), async (text) => {
          const { res, calls } = await postJson(path, text);
          checkAnswer(res, calls, text);
        }),
        { numRuns: 100 },
      );
      forgetRequests();
    });

    it(`${path}: arbitrary objects and values (fc.anything / fc.object through JSON.stringify)`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitraryObjectText(path), async (text) => {
          const { res, calls } = await postJson(path, text);
          checkAnswer(res, calls, text);
        }),
        { numRuns: 60 },
      );
      forgetRequests();
    });

    // DEFECT (POST /api/v3/open/CreateAsset only): a URL that passes the schema's ^https?:// pattern but does not parse ('http://') answers 500.
    it(`${path}: near-valid bodies (one field replaced, removed or added)`, async () => {
      await fc.assert(
        fc.asyncProperty(nearValidBody(VALID[path]!), async (body) => {
          const text = JSON.stringify(body);
          const { res, calls } = await postJson(path, text);
          checkAnswer(res, calls, text);
        }),
        { numRuns: 150 },
      );
      forgetRequests();
    });
  }

  // regression (was a defect): Content-Encoding gzip/deflate/br over a body that is not compressed that way answers 500 (zlib's error is not mapped).
  it('any Content-Type and Content-Encoding on a valid body', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        undefined,
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json;charset=UTF-8',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/json; charset=bogus',
        'application/json; charset',
        'application/json; =',
        'application/vnd.api+json',
        'text/json',
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        '*/*',
        '',
        ';',
      ),
      fc.string({ maxLength: 30 }),
    );
    const encoding = fc.constantFrom(undefined, 'identity', 'gzip', 'deflate', 'br', 'x-gzip', 'compress', 'x-bogus', 'gzip, gzip', 'GZIP');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...JSON_ROUTES), contentType, encoding, fc.boolean(), async (path, type, coding, compress) => {
        const text = JSON.stringify(VALID[path]![0]);
        let body: Buffer = Buffer.from(text);
        if (compress && coding === 'gzip') body = zlib.gzipSync(body);
        if (compress && coding === 'deflate') body = zlib.deflateSync(body);
        if (compress && coding === 'br') body = zlib.brotliCompressSync(body);
        const { res, calls } = await postJson(path, body, { 'content-type': type, 'content-encoding': coding });
        checkAnswer(res, calls, text);
      }),
      { numRuns: 200 },
    );
    forgetRequests();
  });
});

describe('property: arbitrary multipart forms on /v1/images/edits', () => {
  it('arbitrary fields and small files under arbitrary names', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyPart, { maxLength: 8 }), async (parts) => {
        const { res, calls } = await postForm(parts);
        checkAnswer(res, calls, JSON.stringify(parts));
      }),
      { numRuns: 150 },
    );
    forgetRequests();
  });

  it('near-valid forms (one part removed, replaced, added, duplicated or its value changed)', async () => {
    await fc.assert(
      fc.asyncProperty(nearValidForm(), async (parts) => {
        const { res, calls } = await postForm(parts);
        checkAnswer(res, calls, JSON.stringify(parts));
      }),
      { numRuns: 150 },
    );
    forgetRequests();
  });
});

describe('property: arbitrary task ids on GET /api/v3/contents/generations/tasks/{id}', () => {
  async function getTask(encodedId: string): Promise<{ res: RawResponse; calls: number }> {
    const before = upstreamCount();
    const res = await client.send({ method: 'GET', path: `${TASKS}/${encodedId}`, headers: { authorization: `Bearer ${KEY_A}` } });
    return { res, calls: upstreamCount() - before };
  }

  it('any string, url-encoded: 404 with the error object, nothing sent upstream', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ minLength: 1, maxLength: 80 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })), async (id) => {
        const { res, calls } = await getTask(encodeURIComponent(id));
        checkAnswer(res, calls, id);
        expect(res.status, res.text).toBe(404);
      }),
      { numRuns: 200 },
    );
  });

  // regression (was a defect): a percent-escape that is not UTF-8 (e.g. '%80') in the id answers 500 (the router's URIError, status 400, is not honoured).
  it('any bytes, percent-encoded (not necessarily UTF-8): 400 or 404, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 12 }), async (bytes) => {
        const id = [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');
        const { res, calls } = await getTask(id);
        checkAnswer(res, calls, id);
        expect([400, 404], res.text).toContain(res.status);
      }),
      { numRuns: 150 },
    );
  });
});

describe('malformed percent-encoding in the task id', () => {
  const ids = ['%80', '%E0%A4%A', '%zz'];
  // regression (was a defect): the router's decode error (a URIError with status 400) reaches the gateway's error middleware, which answers 500 — before authentication, too.
  it.each(ids)('GET …/tasks/%s with a key: a 400/404 error object, never 500', async (id) => {
    const res = await client.send({ method: 'GET', path: `${TASKS}/${id}`, headers: { authorization: `Bearer ${KEY_A}` } });
    checkAnswer(res, 0, id);
    expect([400, 404], res.text).toContain(res.status);
  });
  it.each(ids)('GET …/tasks/%s without a key: a 4xx error object, never 500', async (id) => {
    const res = await client.send({ method: 'GET', path: `${TASKS}/${id}` });
    checkAnswer(res, 0, id);
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
  });
  it.each(ids)('POST …/tasks/%s (a path the gateway does not serve): never 5xx', async (id) => {
    const res = await client.send({ method: 'POST', path: `${TASKS}/${id}`, headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status, res.text).toBeLessThan(500);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Targeted cases
// ---------------------------------------------------------------------------------------------

describe('prototype pollution keys', () => {
  const POLLUTE = '{"polluted":"yes"}';
  const CONSTRUCTOR = `{"prototype":${POLLUTE}}`;
  const imageBody = (inner: string) => `{"model":"x-image-2.0","prompt":"placeholder","input":{"messages":[{"role":"user","content":[{"text":"a cat"}]${inner}}]},"parameters":{"n":1}}`;
  // [name, path, raw JSON body, the fake that serves it]
  const cases: Array<[string, string, string, () => FakeUpstream]> = [
    ['images (DashScope): top level', '/v1/images/generations', `{"model":"x-image-2.0","prompt":"a cat","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR},"prototype":${POLLUTE}}`, () => dashscope],
    [
      'images (DashScope): in parameters',
      '/v1/images/generations',
      `{"model":"x-image-2.0","prompt":"a cat","parameters":{"n":1,"__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}}}`,
      () => dashscope,
    ],
    [
      'images (DashScope): in input',
      '/v1/images/generations',
      `{"model":"x-image-2.0","prompt":"p","input":{"__proto__":${POLLUTE},"constructor":${CONSTRUCTOR},"messages":[{"role":"user","content":[{"text":"a cat"}]}]}}`,
      () => dashscope,
    ],
    ['images (DashScope): in a message', '/v1/images/generations', imageBody(`,"__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}`), () => dashscope],
    [
      'images (DashScope): in a content item',
      '/v1/images/generations',
      `{"model":"x-image-2.0","input":{"messages":[{"role":"user","content":[{"text":"a cat","__proto__":${POLLUTE}}]}]}}`,
      () => dashscope,
    ],
    [
      'images (OpenAI): top level and nested',
      '/v1/images/generations',
      `{"model":"gpt-image-1","prompt":"a cat","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR},"extra":{"__proto__":${POLLUTE}}}`,
      () => openai,
    ],
    ['chat: top level', '/v1/chat/completions', `{"model":"m","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR},"messages":[{"role":"user","content":"hi"}]}`, () => llm],
    [
      'chat: in messages',
      '/v1/chat/completions',
      `{"model":"m","messages":[{"role":"user","content":"hi","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}},{"__proto__":${POLLUTE},"role":"user","content":"again"}]}`,
      () => llm,
    ],
    [
      'responses: top level and in input',
      '/v1/responses',
      `{"model":"m","__proto__":${POLLUTE},"input":[{"role":"user","content":"hi","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}}]}`,
      () => llm,
    ],
    ['native images: top level', '/api/v3/images/generations', `{"model":"seedream","prompt":"a cat","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}}`, () => llm],
    [
      'video tasks: top level and in content',
      TASKS,
      `{"model":"seedance","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR},"content":[{"type":"text","text":"a cat","__proto__":${POLLUTE}},{"type":"image_url","image_url":{"url":"${PUBLIC_IMAGE_URL}","__proto__":${POLLUTE}},"constructor":${CONSTRUCTOR}}]}`,
      () => ark,
    ],
    [
      'CreateAsset: top level',
      '/api/v3/open/CreateAsset',
      `{"GroupId":"g","URL":"https://media.example.com/a.png","AssetType":"Image","__proto__":${POLLUTE},"constructor":${CONSTRUCTOR}}`,
      () => openapi,
    ],
  ];

  /** Own `polluted` keys anywhere but inside a __proto__ / prototype object: fields that were inherited and then copied. */
  function gainedFields(value: unknown, parentKey = ''): string[] {
    if (Array.isArray(value)) return value.flatMap((item) => gainedFields(item, parentKey));
    if (!isObject(value)) return [];
    const found = Object.hasOwn(value, 'polluted') && parentKey !== '__proto__' && parentKey !== 'prototype' ? [`polluted under '${parentKey}'`] : [];
    return [...found, ...Object.keys(value).flatMap((key) => gainedFields(value[key], key))];
  }

  it.each(cases)('%s: no crash, no pollution, nothing inherited upstream', async (_name, path, body, fake) => {
    const objectKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const arrayKeys = Object.getOwnPropertyNames(Array.prototype).sort();
    const before = fake().requests.length;
    const { res, calls } = await postJson(path, body);
    checkAnswer(res, calls, body);
    expect(res.status, res.text).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(objectKeys);
    expect(Object.getOwnPropertyNames(Array.prototype).sort()).toEqual(arrayKeys);
    for (const sent of fake().requests.slice(before)) {
      expect(sent.json, 'the upstream body is JSON').toBeDefined();
      expect(gainedFields(sent.json)).toEqual([]);
    }
  });

  it('a field inside __proto__ is never read as the field itself', async () => {
    const noModel = await postJson('/v1/images/generations', '{"__proto__":{"model":"x-image-2.0"},"prompt":"a cat"}');
    expect(noModel.res.status).toBe(400);
    expect(JSON.parse(noModel.res.text).error.message).toBe('model is required');
    expect(noModel.calls).toBe(0);

    const downloadsBefore = dashscope.requests.filter((r) => r.path.startsWith('/results/')).length;
    const b64 = await postJson('/v1/images/generations', '{"model":"x-image-2.0","prompt":"a cat","__proto__":{"response_format":"b64_json"}}');
    expect(b64.res.status).toBe(200);
    expect(JSON.parse(b64.res.text).data[0].b64_json).toBe('');
    expect(dashscope.requests.filter((r) => r.path.startsWith('/results/')).length).toBe(downloadsBefore);

    const stream = await postJson('/v1/chat/completions', '{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"stream":true}}');
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers['content-type']).toMatch(/^application\/json/);

    const asset = await postJson('/api/v3/open/CreateAsset', '{"__proto__":{"GroupId":"g","URL":"https://media.example.com/a.png","AssetType":"Image"}}');
    expect(asset.res.status).toBe(400);
    expect(asset.calls).toBe(0);
  });

  const formCases: Array<[string, string]> = [
    ['DashScope edit', 'x-image-edit'],
    ['OpenAI edit (form re-sent upstream)', 'gpt-image-1'],
  ];
  it.each(formCases)('multipart field names __proto__[…] and constructor[prototype][…] (%s)', async (_name, model) => {
    const objectKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const { res, calls } = await postForm([
      field('model', model),
      field('prompt', 'make it night'),
      field('__proto__[polluted]', 'yes'),
      field('constructor[prototype][polluted]', 'yes'),
      field('image[__proto__]', 'yes'),
      file('image', TINY_PNG),
    ]);
    checkAnswer(res, calls, '');
    expect(res.status, res.text).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(objectKeys);
    const sent = model.startsWith('gpt-') ? lastRequest(openai) : lastRequest(dashscope);
    if (sent?.json !== undefined) expect(gainedFields(sent.json)).toEqual([]);
  });
});

describe('URL fields that match the schema pattern but do not parse', () => {
  const urls = ['http://', 'https://', 'https://[', 'http://[::1', 'https://%', 'http:// ', 'https://a b/c.png', 'http://:80/'];
  // regression (was a defect): POST /api/v3/open/CreateAsset calls new URL(body.URL) unguarded after the ^https?:// schema check: a URL that does not parse answers 500.
  it.each(urls)('CreateAsset URL %j: 400 error object naming URL, nothing sent upstream', async (url) => {
    const body = JSON.stringify({ GroupId: 'g', URL: url, AssetType: 'Image' });
    const { res, calls } = await postJson('/api/v3/open/CreateAsset', body);
    checkAnswer(res, calls, body);
    expect(res.status, res.text).toBe(400);
    expect(JSON.parse(res.text).error.param).toBe('URL');
  });

  it.each(urls)('image URL %j in images, native images and video tasks: never 5xx, nothing sent upstream for a 400', async (url) => {
    const bodies: Array<[string, Json]> = [
      ['/v1/images/generations', { model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: url }, { text: 'x' }] }] } }],
      ['/api/v3/images/generations', { model: 'seedream', prompt: 'x', image: url }],
      [
        TASKS,
        {
          model: 'seedance',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    ];
    for (const [path, payload] of bodies) {
      const text = JSON.stringify(payload);
      const { res, calls } = await postJson(path, text);
      checkAnswer(res, calls, text);
    }
  });
});

describe('deeply nested JSON', () => {
  const DEPTH = 10_000;
  const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  /** A valid body of the route with a deep value at a field the gateway forwards upstream. */
  const FORWARDED_FIELD: Record<string, [string, ...string[]]> = {
    '/v1/images/generations': ['parameters', 'vendor_option'],
    '/v1/chat/completions': ['metadata'],
    '/v1/responses': ['metadata'],
    '/api/v3/images/generations': ['extra_body'],
    [TASKS]: ['extra_body'],
    '/api/v3/open/CreateAsset': ['Tags'],
  };
  function validWithDeep(path: string, deep: string): string {
    const body = structuredClone<Json>(VALID[path]![0]!);
    const [first, ...rest] = FORWARDED_FIELD[path]!;
    let target = body;
    let key = first;
    for (const next of rest) {
      target = (target[key] ??= {}) as Json;
      key = next;
    }
    target[key] = '__DEEP__';
    return JSON.stringify(body).replace('"__DEEP__"', deep);
  }

  const cases: Array<[string, string, string]> = [
    ...JSON_ROUTES.flatMap((path): Array<[string, string, string]> => [
      [path, `[[[…]]] ${DEPTH} levels`, deepArray(DEPTH)],
      [path, `{"a":{"a":…}} ${DEPTH} levels`, deepObject(DEPTH)],
      // regression (was a defect): no nesting limit on JSON bodies: a deep value in a forwarded field passes the parser and the gateway's own JSON.stringify overflows the stack (500).
      [path, `${DEPTH} levels inside a forwarded field of a valid body`, validWithDeep(path, deepObject(DEPTH))],
    ]),
    ['/v1/images/generations', '[[[…]]] 100000 levels', deepArray(100_000)],
    ['/v1/chat/completions', '100000 levels inside a forwarded field of a valid body', validWithDeep('/v1/chat/completions', deepArray(100_000))],
  ];
  it.each(cases)('%s, %s: 400 error object, fast, nothing sent upstream', async (path, _name, body) => {
    const { res, calls } = await postJson(path, body);
    checkAnswer(res, calls, '');
    expect(res.status, res.text).toBe(400);
    expect(res.ms).toBeLessThan(2_000);
    expect(calls).toBe(0);
  });
});

describe('huge bodies and strings', () => {
  const MB = 1024 * 1024;
  function bodyOfSize(prefix: string, suffix: string, bytes: number): Buffer {
    const body = Buffer.alloc(bytes, 'a');
    body.write(prefix, 0);
    body.write(suffix, bytes - suffix.length);
    return body;
  }

  it('a 20 MB prompt (within the 48 MiB JSON limit) is served and forwarded whole', async () => {
    const body = bodyOfSize('{"model":"x-image-2.0","prompt":"', '"}', 20 * MB);
    const { res, calls } = await postJson('/v1/images/generations', body);
    checkAnswer(res, calls, '');
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const sent = dashscope.apiRequests().at(-1)?.json as { input: { messages: Array<{ content: Array<{ text: string }> }> } };
    expect(sent.input.messages[0]!.content[0]!.text.length).toBe(20 * MB - '{"model":"x-image-2.0","prompt":"'.length - 2);
    forgetRequests();
  });

  it('a 20 MB chat message is served and forwarded whole', async () => {
    const body = bodyOfSize('{"model":"m","messages":[{"role":"user","content":"', '"}]}', 20 * MB);
    const { res, calls } = await postJson('/v1/chat/completions', body);
    checkAnswer(res, calls, '');
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(lastRequest(llm)?.body.length).toBeGreaterThan(20 * MB - 100);
    forgetRequests();
  });

  const overLimit: Array<[string, string, number | undefined]> = JSON_ROUTES.map((path) => [path, 'with Content-Length', undefined]);
  overLimit.push(['/v1/images/generations', 'chunked, no Content-Length', 1 * MB], ['/v1/chat/completions', 'chunked, no Content-Length', 4 * MB]);
  it.each(overLimit)(
    '%s: a 60 MB body (%s) over the 48 MiB limit is a 413, nothing sent upstream',
    async (path, _how, chunkBytes) => {
      const body = bodyOfSize('{"model":"x-image-2.0","prompt":"', '"}', 60 * MB);
      const before = upstreamCount();
      const res = await client.send({ path, body, chunkBytes, headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' } });
      checkAnswer(res, upstreamCount() - before, '');
      expect(res.status, res.text).toBe(413);
      expect(JSON.parse(res.text).error.code).toBe('request_too_large');
      expect(res.ms).toBeLessThan(10_000);
    },
    60_000,
  );

  it('an 11 MB Data URL image is a 413 before any upstream call', async () => {
    const dataUrl = `data:image/png;base64,${Buffer.alloc(11 * MB).toString('base64')}`;
    const body = JSON.stringify({ model: 'x-image-edit', input: { messages: [{ role: 'user', content: [{ image: dataUrl }, { text: 'x' }] }] } });
    const { res, calls } = await postJson('/v1/images/generations', body);
    checkAnswer(res, calls, '');
    expect(res.status, res.text).toBe(413);
  });

  it('an 11 MB uploaded file is a 413 before any upstream call', async () => {
    const big = Buffer.concat([TINY_PNG, Buffer.alloc(11 * MB)]);
    const { res, calls } = await postForm([field('model', 'x-image-edit'), field('prompt', 'x'), file('image', big)]);
    checkAnswer(res, calls, '');
    expect(res.status, res.text).toBe(413);
  });
});

describe('invalid UTF-8 and odd encodings in the JSON body', () => {
  const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));
  const cases: Array<[string, string, Buffer]> = [
    ['0xff 0xfe inside the prompt', '/v1/images/generations', bytes('{"model":"x-image-2.0","prompt":"a ', [0xff, 0xfe], ' cat"}')],
    ['0xff 0xfe inside the model name', '/v1/images/generations', bytes('{"model":"x-image-2.0', [0xff, 0xfe], '","prompt":"a cat"}')],
    ['an overlong "/" (0xc0 0xaf) inside a message', '/v1/chat/completions', bytes('{"model":"m","messages":[{"role":"user","content":"..', [0xc0, 0xaf], 'etc"}]}')],
    ['a UTF-8-encoded lone surrogate (0xed 0xa0 0x80)', '/v1/responses', bytes('{"model":"m","input":"', [0xed, 0xa0, 0x80], '"}')],
    ['a truncated sequence at the end of a string', TASKS, bytes('{"model":"seedance","content":[{"type":"text","text":"x', [0xe2, 0x82], '"}]}')],
    ['invalid bytes outside any string', '/v1/images/generations', bytes('{"model":"x-image-2.0","prompt":"a cat"', [0xff, 0xfe], '}')],
    ['a UTF-8 BOM before the body', '/v1/images/generations', bytes([0xef, 0xbb, 0xbf], '{"model":"x-image-2.0","prompt":"a cat"}')],
    ['a UTF-16LE body', '/v1/chat/completions', Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}]}', 'utf16le')],
    ['escaped NUL and lone surrogates in values', '/api/v3/open/CreateAsset', bytes('{"GroupId":"g\\u0000","URL":"https://media.example.com/\\ud800.png","AssetType":"Image","Name":"\\udfff"}')],
  ];
  it.each(cases)('%s (%s): 400 or a clean answer, never 5xx', async (_name, path, body) => {
    const before = fakes().map((fake) => fake.requests.length);
    const { res, calls } = await postJson(path, body);
    checkAnswer(res, calls, body.toString('latin1'));
    expect(res.status, res.text).toBeLessThan(500);
    // whatever went upstream is well-formed JSON
    const sent = fakes().flatMap((fake, index) => fake.requests.slice(before[index]).filter((r) => !r.path.startsWith('/results/')));
    for (const request of sent) expect(request.json, request.body.toString('utf8').slice(0, 200)).toBeDefined();
  });

  it('Content-Encoding gzip over a body that is not gzip: a 4xx error object, never 500', async () => {
    // regression (was a defect): body-parser's inflate error (an http-errors 400 without a `type`) is rendered as 500 by the error middleware.
    const { res, calls } = await postJson('/v1/images/generations', '{"model":"x-image-2.0","prompt":"a cat"}', { 'content-encoding': 'gzip' });
    checkAnswer(res, calls, '');
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
  });

  // compressed request bodies are refused by default (compressedBodies option); see inbound-bodies.spec.ts
  it('a real gzip body is refused with 415 by default', async () => {
    const { res } = await postJson('/v1/images/generations', zlib.gzipSync('{"model":"x-image-2.0","prompt":"a cat"}'), { 'content-encoding': 'gzip' });
    expect(res.status, res.text).toBe(415);
  });
});

describe('duplicate and malformed headers', () => {
  const body = JSON.stringify({ model: 'x-image-2.0', prompt: 'a cat' });
  const cases: Array<[string, Record<string, string | string[]>]> = [
    // regression (was a defect): Node keeps only the first Authorization header; the gateway accepts the request as the first key's tenant and calls the upstream.
    ['two Authorization headers, two valid keys', { authorization: [`Bearer ${KEY_A}`, `Bearer ${KEY_B}`], 'content-type': 'application/json' }],
    // regression (was a defect): same cause as above: a valid key followed by a wrong one is served as the valid key.
    ['two Authorization headers, valid then wrong', { authorization: [`Bearer ${KEY_A}`, `Bearer ${WRONG_KEY}`], 'content-type': 'application/json' }],
    ['two Authorization headers, wrong then valid', { authorization: [`Bearer ${WRONG_KEY}`, `Bearer ${KEY_A}`], 'content-type': 'application/json' }],
    // regression (was a defect): Node keeps only the first Content-Type; the body is parsed as JSON although the request also says text/plain.
    ['two Content-Type headers, JSON first', { authorization: `Bearer ${KEY_A}`, 'content-type': ['application/json', 'text/plain'] }],
    ['two Content-Type headers, JSON second', { authorization: `Bearer ${KEY_A}`, 'content-type': ['text/plain', 'application/json'] }],
  ];
  it.each(cases)('%s: a clean 4xx, nothing sent upstream', async (_name, headers) => {
    const before = upstreamCount();
    const res = await client.send({ path: '/v1/images/generations', body, headers });
    checkAnswer(res, upstreamCount() - before, body);
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
    expect(upstreamCount() - before).toBe(0);
  });

  const authorizations: Array<[string, string]> = [
    ['a 5000-character key', `Bearer ${'k'.repeat(5000)}`],
    ['a key with trailing garbage', `Bearer ${KEY_A} extra`],
    ['another scheme', `Basic ${Buffer.from(`user:${KEY_A}`).toString('base64')}`],
    ['a tab between scheme and key', `Bearer\t${WRONG_KEY}`],
    ['only the scheme', 'Bearer'],
    ['non-ASCII bytes', 'Bearer \u00ff\u00fe'],
  ];
  it.each(authorizations)('Authorization with %s: 401 error object, nothing sent upstream', async (_name, authorization) => {
    const before = upstreamCount();
    const res = await client.send({ path: '/v1/chat/completions', body: JSON.stringify(VALID['/v1/chat/completions']![0]), headers: { authorization, 'content-type': 'application/json' } });
    checkAnswer(res, upstreamCount() - before, '');
    expect(res.status, res.text).toBe(401);
  });
});

describe('model names never shape the upstream URL', () => {
  const HOSTILE_SUFFIXES = ['/../../../admin', '..%2F..%2Fadmin', '%2F', '?x=1&y=2', '#fragment', ' with spaces ', '-模型-🖼️-ü', '\r\nX-Injected: 1', '\u0000', '/./', '\\..\\'];
  // [route, request path, model prefix, the fake, the exact path it must receive]
  const routes: Array<[string, string, string, () => FakeUpstream, string]> = [
    ['DashScope images', '/v1/images/generations', 'x-image-2.0', () => dashscope, DASHSCOPE_PATH],
    ['OpenAI images', '/v1/images/generations', 'gpt-image-1', () => openai, '/v1/images/generations'],
    ['OpenAI chat', '/v1/chat/completions', 'chat', () => llm, '/v1/chat/completions'],
    ['OpenAI responses', '/v1/responses', 'resp', () => llm, '/v1/responses'],
    ['Ark native images', '/api/v3/images/generations', 'seedream', () => llm, '/api/v3/images/generations'],
    ['Ark video tasks', TASKS, 'seedance', () => ark, TASKS],
  ];
  const bodyFor = (path: string, model: string): Json => {
    const base = structuredClone<Json>(VALID[path]![path === '/v1/images/generations' && model.startsWith('gpt-') ? 2 : 0]!);
    return { ...base, model };
  };
  const cases = routes.flatMap(([name, path, prefix, fake, upstreamPath]) => HOSTILE_SUFFIXES.map((suffix) => [name, JSON.stringify(suffix), path, `${prefix}${suffix}`, fake, upstreamPath] as const));

  it.each(cases)('%s, model suffix %s: the fixed upstream path, the model only in the body', async (_name, _suffix, path, model, fake, upstreamPath) => {
    const before = fake().requests.length;
    const { res, calls } = await postJson(path, JSON.stringify(bodyFor(path, model)));
    checkAnswer(res, calls, model);
    expect(res.status, res.text).toBe(200);
    const sent = fake()
      .requests.slice(before)
      .filter((r) => !r.path.startsWith('/results/'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe(upstreamPath);
    expect((sent[0]!.json as Json).model).toBe(model);
    expect(sent[0]!.headers['x-injected']).toBeUndefined();
    for (const value of Object.values(sent[0]!.headers)) expect(String(value)).not.toContain(model.trim());

    if (path === TASKS) {
      // the query goes to Ark's fixed path with Ark's own id, whatever the model is called
      const query = await client.send({ method: 'GET', path: `${TASKS}/${JSON.parse(res.text).id}`, headers: { authorization: `Bearer ${KEY_A}` } });
      expect(query.status, query.text).toBe(200);
      expect(JSON.parse(query.text).model).toBe(model);
      expect(lastRequest(ark)?.path).toMatch(/^\/api\/v3\/contents\/generations\/tasks\/cgt-[0-9-]+$/);
    }
  });

  it.each(HOSTILE_SUFFIXES.map((suffix) => [JSON.stringify(suffix), `gpt-image-1${suffix}`] as const))('OpenAI multipart edit, model suffix %s: the fixed upstream path', async (_suffix, model) => {
    const before = openai.requests.length;
    const { res } = await postForm([field('model', model), field('prompt', 'add a hat'), file('image', TINY_PNG)]);
    expect(res.status, res.text).toBe(200);
    const sent = openai.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/v1/images/edits');
    expect(sent[0]!.headers['x-injected']).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Keys never leak
// ---------------------------------------------------------------------------------------------

describe('keys never leak', () => {
  let ds2: FakeDashscope;
  let oa2: FakeOpenAI;
  let llm2: FakeLlm;
  let ark2: FakeArk;
  let openapi2: FakeUpstream;
  let receiver: CallbackReceiver;
  let leak: TestGateway;
  let leakServer: { url: string; close(): Promise<void> };
  let leakClient: RawClient;
  const logs: string[] = [];
  const DEAD = 'http://127.0.0.1:1';

  type Scenario = 'live' | 'unknown' | 'resolver-throws' | 'invalid-upstream' | 'unreachable' | 'fallback';

  function live(route: string, model: string): Upstream {
    switch (route) {
      case 'images.generations':
      case 'images.edits':
        return model.startsWith('gpt-') ? { provider: 'openai', baseURL: oa2.baseURL, apiKey: OPERATOR_KEY } : { provider: 'dashscope', baseURL: ds2.baseURL, apiKey: OPERATOR_KEY };
      case 'chat.completions':
      case 'responses':
        return { provider: 'openai', baseURL: llm2.baseURL, apiKey: OPERATOR_KEY };
      case 'images.native':
        return { provider: 'ark', baseURL: `${llm2.origin}/api/v3`, apiKey: OPERATOR_KEY };
      case 'video.tasks':
        return { provider: 'ark', baseURL: ark2.baseURL, apiKey: OPERATOR_KEY };
      default:
        return { provider: 'ark', baseURL: openapi2.origin, accessKeyId: VOLC_ACCESS_KEY_ID, secretAccessKey: VOLC_SECRET_ACCESS_KEY };
    }
  }

  beforeAll(async () => {
    ds2 = await startFakeDashscope();
    oa2 = await startFakeOpenAI();
    llm2 = await startFakeLlm();
    llm2.chunkDelayMs = 1;
    ark2 = await startFakeArk();
    let created = 0;
    openapi2 = await startFakeUpstream((_req, res) => {
      created += 1;
      sendJson(res, 200, { ResponseMetadata: { RequestId: `r-${created}` }, Result: { Id: `asset-leak-${created}` } });
    });
    receiver = await startCallbackReceiver();
    const keys = staticKeys({ [KEY_A]: { id: 'tenant-a' }, [KEY_B]: { id: 'tenant-b' } });
    const capture = (level: string) => (fields: Record<string, unknown>, message: string) => logs.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
    leak = createTestGateway({
      logger: { info: capture('info'), warn: capture('warn'), error: capture('error') },
      callbacks: { allowLocal: true, pollIntervalsMs: { video: [20] }, retryBaseMs: 10, retryMaxMs: 20 },
      verifyKey: (key, req) => {
        if (key === THROW_KEY_PLAIN) throw new Error('the key store is unavailable');
        // a verifier whose error quotes what it was given, as database and cache clients do
        if (key === THROW_KEY_QUOTED) throw new Error(`the key store is unavailable (GET apikey:${key})`);
        return keys(key, req);
      },
      resolveUpstream: ({ model, route, req }) => {
        const scenario = (req?.headers['x-scenario'] as Scenario | undefined) ?? 'live';
        const dead: Upstream = { ...live(route, model), baseURL: route === 'assets' ? DEAD : `${DEAD}/api/v1` };
        switch (scenario) {
          case 'unknown':
            return null;
          case 'resolver-throws':
            throw new Error('the routing table is unavailable');
          case 'invalid-upstream':
            return { provider: 'bogus' as ProviderName, baseURL: 'ftp://nowhere', apiKey: OPERATOR_KEY, secretAccessKey: VOLC_SECRET_ACCESS_KEY };
          case 'unreachable':
            return dead;
          case 'fallback':
            return [dead, live(route, model)];
          default:
            return live(route, model);
        }
      },
    });
    leakServer = await listen(leak.app);
    leakClient = rawClient(leakServer.url);
  });

  afterAll(async () => {
    leakClient.close();
    await leakServer.close();
    await leak.close();
    await Promise.all([ds2, oa2, llm2, ark2, openapi2, receiver].map((fake) => fake.close()));
  });

  /** What an upstream would say when it echoes the credentials it received (error messages that quote keys or headers). */
  function echoingFailure(format: 'dashscope' | 'openai' | 'ark' | 'volcengine', status: 401 | 500): Responder {
    return (req: RecordedRequest, res: ServerResponse) => {
      const said = status === 401 ? `Incorrect API key provided: ${String(req.headers.authorization)}` : `internal error; the request headers were ${JSON.stringify(req.headers)}`;
      const code =
        status === 401
          ? { dashscope: 'InvalidApiKey', openai: 'invalid_api_key', ark: 'AuthenticationError', volcengine: 'SignatureDoesNotMatch' }[format]
          : { dashscope: 'InternalError', openai: 'server_error', ark: 'InternalServiceError', volcengine: 'InternalError' }[format];
      if (format === 'dashscope') sendJson(res, status, { request_id: 'ds-echo', code, message: said });
      else if (format === 'volcengine') sendJson(res, status, { ResponseMetadata: { RequestId: 'v-echo', Error: { Code: code, Message: said } } });
      else sendJson(res, status, { error: { message: said, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code } });
    };
  }

  interface Kit {
    /** The fake that serves the route, and its error format. */
    fake(): FakeUpstream;
    format: 'dashscope' | 'openai' | 'ark' | 'volcengine';
    /**
     * Sends one request with the key, scenario header and a valid (or invalid) body; `arm` scripts the
     * upstream's answer and is called right before the request under test, when it reaches the upstream.
     */
    send(key: string, scenario: Scenario, invalid: boolean, arm: () => void): Promise<RawResponse>;
  }

  const jsonKit = (path: string, valid: Json, invalid: Json, fake: () => FakeUpstream, format: Kit['format']): Kit => ({
    fake,
    format,
    send: (key, scenario, bad, arm) => {
      arm();
      return leakClient.send({ path, body: JSON.stringify(bad ? invalid : valid), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-scenario': scenario } });
    },
  });
  const formKit = (model: string, fake: () => FakeUpstream, format: Kit['format']): Kit => ({
    fake,
    format,
    send: async (key, scenario, bad, arm) => {
      arm();
      let req = request(leakServer.url).post('/v1/images/edits').set('Authorization', `Bearer ${key}`).set('x-scenario', scenario).field('model', model).field('prompt', 'make it night');
      req = bad ? req.attach('image', Buffer.from('not an image'), 'a.png') : req.attach('image', TINY_PNG, 'a.png');
      const res = await req;
      return { status: res.status, headers: res.headers, text: res.text, ms: 0 };
    },
  });
  const task = VALID[TASKS]![0]!;
  const KITS: Record<string, Kit> = {
    'images.generations (DashScope, b64_json)': jsonKit(
      '/v1/images/generations',
      { model: 'x-image-2.0', prompt: 'a cat', response_format: 'b64_json' },
      { model: 'x-image-2.0', parameters: { size: '1024x1024' } },
      () => ds2,
      'dashscope',
    ),
    'images.generations (OpenAI)': jsonKit('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a cat' }, { model: 42 }, () => oa2, 'openai'),
    'images.edits (DashScope)': formKit('x-image-edit', () => ds2, 'dashscope'),
    'images.edits (OpenAI)': formKit('gpt-image-1', () => oa2, 'openai'),
    'chat.completions': jsonKit('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { model: 'm', messages: 'hi' }, () => llm2, 'openai'),
    'chat.completions (stream)': jsonKit(
      '/v1/chat/completions',
      { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      { model: 'm', stream: 'yes', messages: [] },
      () => llm2,
      'openai',
    ),
    responses: jsonKit('/v1/responses', { model: 'm', input: 'hi' }, { model: 'm', input: 7 }, () => llm2, 'openai'),
    'responses (stream)': jsonKit('/v1/responses', { model: 'm', input: 'hi', stream: true }, { model: 'm', input: 'hi', stream: 1 }, () => llm2, 'openai'),
    'images.native': jsonKit('/api/v3/images/generations', { model: 'seedream', prompt: 'a cat' }, { model: 'seedream', prompt: '' }, () => llm2, 'ark'),
    'video.tasks create': jsonKit(TASKS, task, { ...task, content: [{ type: 'movie' }] }, () => ark2, 'ark'),
    'video.tasks query': {
      fake: () => ark2,
      format: 'ark',
      send: async (key, scenario, bad, arm) => {
        const created = await leakClient.send({ path: TASKS, body: JSON.stringify(task), headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' } });
        const id = bad ? 'task_not-a-real-id' : (JSON.parse(created.text) as { id: string }).id;
        // only a request that gets past the key check and names a real task reaches Ark
        if (!bad && key === KEY_A) arm();
        return leakClient.send({ method: 'GET', path: `${TASKS}/${id}`, headers: { authorization: `Bearer ${key}`, 'x-scenario': scenario } });
      },
    },
    'video.tasks query (another tenant)': {
      fake: () => ark2,
      format: 'ark',
      // tenant B never reaches Ark for tenant A's task: nothing is scripted
      send: async (_key, scenario) => {
        const created = await leakClient.send({ path: TASKS, body: JSON.stringify(task), headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' } });
        return leakClient.send({ method: 'GET', path: `${TASKS}/${(JSON.parse(created.text) as { id: string }).id}`, headers: { authorization: `Bearer ${KEY_B}`, 'x-scenario': scenario } });
      },
    },
    assets: jsonKit(
      '/api/v3/open/CreateAsset',
      { GroupId: 'g', URL: 'https://media.example.com/a.png', AssetType: 'Image' },
      { GroupId: 'g', URL: 'ftp://x', AssetType: 'Image' },
      () => openapi2,
      'volcengine',
    ),
  };

  interface Situation {
    key: string;
    scenario: Scenario;
    invalid?: boolean;
    upstream?: 401 | 500;
    /** The status that proves the situation really happened. */
    status: number;
  }
  const SITUATIONS: Record<string, Situation> = {
    success: { key: KEY_A, scenario: 'live', status: 200 },
    'a wrong key': { key: WRONG_KEY, scenario: 'live', status: 401 },
    'verifyKey throws': { key: THROW_KEY_PLAIN, scenario: 'live', status: 500 },
    // regression (was a defect): verifyKey's error message is logged verbatim, so a verifier error that quotes the key puts the caller's full key in the log.
    'verifyKey throws, its message quoting the key': { key: THROW_KEY_QUOTED, scenario: 'live', status: 500 },
    'an unknown model': { key: KEY_A, scenario: 'unknown', status: 404 },
    'a validation error': { key: KEY_A, scenario: 'live', invalid: true, status: 400 },
    'the upstream answers 401, quoting the key it got': { key: KEY_A, scenario: 'live', upstream: 401, status: 502 },
    // regression (was a defect): a non-auth upstream error message is copied into the caller's error (and poll logs); an upstream that quotes the request headers leaks the operator key.
    'the upstream answers 500, quoting the headers it got': { key: KEY_A, scenario: 'live', upstream: 500, status: 502 },
    'the upstream is unreachable': { key: KEY_A, scenario: 'unreachable', status: 502 },
    'fallback after an unreachable upstream': { key: KEY_A, scenario: 'fallback', status: 200 },
    'the resolver throws': { key: KEY_A, scenario: 'resolver-throws', status: 500 },
    'the resolver returns an invalid upstream carrying keys': { key: KEY_A, scenario: 'invalid-upstream', status: 500 },
  };

  function expectNoSecrets(where: string, text: string): void {
    for (const [name, secret] of SECRETS) expect(text.includes(secret), `${name} appears in ${where}: ${text.slice(Math.max(0, text.indexOf(secret) - 200), text.indexOf(secret) + 100)}`).toBe(false);
  }

  const settle = (ms = 10) => new Promise((resolve) => setTimeout(resolve, ms));

  const cases = Object.keys(KITS).flatMap((kit) => Object.keys(SITUATIONS).map((situation) => [kit, situation] as const));
  it.each(cases)('%s, %s: no key in the response, its headers, the log or the usage events', async (kitName, situationName) => {
    const kit = KITS[kitName]!;
    const situation = SITUATIONS[situationName]!;
    const logStart = logs.length;
    const usageStart = leak.usage.length;
    // scripted right before the call under test, so a create that precedes it is answered normally
    const arm = (): void => {
      if (situation.upstream) kit.fake().next(echoingFailure(kit.format, situation.upstream));
    };
    const res = await kit.send(situation.key, situation.scenario, situation.invalid === true, arm);
    await settle();
    // a bad id is a 404 on the query; tenant B asking for tenant A's task is a 404 whatever else is wrong
    const expected = kitName === 'video.tasks query (another tenant)' ? 404 : kitName === 'video.tasks query' && situation.invalid ? 404 : situation.status;
    expect(res.status, res.text.slice(0, 300)).toBe(expected);
    if (res.status >= 400) expectErrorObject(res);
    expectNoSecrets('the response body', res.text);
    expectNoSecrets('the response headers', JSON.stringify(res.headers));
    expectNoSecrets('the log', logs.slice(logStart).join('\n'));
    expectNoSecrets('the usage events', JSON.stringify(leak.usage.slice(usageStart)));
  });

  it('a callback_url carrying the caller key is refused without echoing it', async () => {
    const logStart = logs.length;
    const res = await leakClient.send({
      path: TASKS,
      body: JSON.stringify({ ...task, callback_url: `${receiver.url}?token=${KEY_A}` }),
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(400);
    expectErrorObject(res);
    expectNoSecrets('the response body', res.text);
    expectNoSecrets('the log', logs.slice(logStart).join('\n'));
  });

  it('callback deliveries (each state, with retries) carry no key in body or headers', async () => {
    receiver.deliveries.length = 0;
    receiver.failFirst = 2;
    const logStart = logs.length;
    const usageStart = leak.usage.length;
    const res = await leakClient.send({
      path: TASKS,
      body: JSON.stringify({ ...task, callback_url: receiver.url }),
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(200);
    // a retried state the task has since passed is dropped (task-state-order.ts); the terminal one always arrives
    const terminal = () => receiver.deliveries.some((delivery) => delivery.status < 300 && (JSON.parse(delivery.body) as { status: string }).status === 'succeeded');
    for (const deadline = Date.now() + 10_000; !terminal() && Date.now() < deadline;) await settle(20);
    expect(terminal()).toBe(true);
    expect(receiver.deliveries.filter((delivery) => delivery.status === 500)).toHaveLength(2);
    await settle(100);
    for (const delivery of receiver.deliveries) {
      expectNoSecrets('a callback body', delivery.body);
      expectNoSecrets('callback headers', JSON.stringify(delivery.headers));
    }
    expectNoSecrets('the log', logs.slice(logStart).join('\n'));
    expectNoSecrets('the usage events', JSON.stringify(leak.usage.slice(usageStart)));
  });

  it('background polls whose upstream fails log no key (401 and 500 quoting what they got)', async () => {
    // regression (was a defect): the poll's warning logs the upstream's 500 message, which quotes the operator key here (same cause as the 500 case above).
    receiver.deliveries.length = 0;
    const logStart = logs.length;
    ark2.scripts.push(['queued', 'succeeded']);
    const res = await leakClient.send({
      path: TASKS,
      body: JSON.stringify({ ...task, callback_url: receiver.url }),
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(200);
    // the next two Ark calls are the first polls
    ark2.next(echoingFailure('ark', 401));
    ark2.next(echoingFailure('ark', 500));
    await receiver.accepted(2);
    await settle(100);
    expect(logs.slice(logStart).some((line) => line.includes('task poll failed'))).toBe(true);
    expectNoSecrets('the log', logs.slice(logStart).join('\n'));
    for (const delivery of receiver.deliveries) expectNoSecrets('a callback body', delivery.body);
  });

  it('a callback receiver that cannot be reached: delivery errors logged without keys', async () => {
    const logStart = logs.length;
    const res = await leakClient.send({
      path: TASKS,
      body: JSON.stringify({ ...task, callback_url: `${DEAD}/hooks` }),
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(200);
    const deadline = Date.now() + 5_000;
    while (!logs.slice(logStart).some((line) => line.includes('callback delivery given up')) && Date.now() < deadline) await settle(20);
    expect(logs.slice(logStart).some((line) => line.includes('callback delivery given up'))).toBe(true);
    expectNoSecrets('the log', logs.slice(logStart).join('\n'));
  });

  it('everything metered and delivered during the whole suite is free of keys', async () => {
    await settle(100);
    expectNoSecrets('the usage events', JSON.stringify(leak.usage));
    for (const delivery of receiver.deliveries) {
      expectNoSecrets('a callback body', delivery.body);
      expectNoSecrets('callback headers', JSON.stringify(delivery.headers));
    }
  });
});
