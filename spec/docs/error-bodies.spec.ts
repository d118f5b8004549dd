// Every error body README.md and docs/ show as JSON, in a ```json block or inline in the prose, is what
// the gateway answers: each is matched by its `code` and `message` to a case below, which sends that
// request to a gateway mounted in a host app and compares the whole error object, the status and that
// no upstream was called. A documented body no case runs fails, and so does text that names a code
// value but is not JSON. docs/upstream-formats.md is left out: its bodies are the vendors' own.
// docs/contributing.md "Documentation"
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { GatewayOptions } from '../../lib/index.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { startFakePaidImages } from '../helpers/fake-paid-images.js';
import { codeBlocks, documentationFiles, inlineCode } from '../helpers/markdown-docs.js';

interface Documented {
  at: string;
  status?: number;
  error: Record<string, unknown> & { code: string; message?: unknown };
}

/** Pages that quote vendors' bodies, not the gateway's. */
const VENDOR_PAGES = new Set(['docs/upstream-formats.md']);

const CONTRACT_TEXT = (text: string) => ({ model: 'x-image-2.0', input: { messages: [{ role: 'user', content: [{ text }] }] } });

interface Case {
  /** What the case sends, for the failure message. */
  what: string;
  status: number;
  options?: Partial<GatewayOptions>;
  send(app: Parameters<typeof request>[0]): request.Test;
}

/** The cases of each documented body, keyed `code: message`: the requests that produce it. */
const CASES: Record<string, Case[]> = {
  'invalid_request_error: model is required': [
    { what: 'a JSON body without model', status: 400, send: (app) => post(app, '/v1/images/generations').send({ prompt: 'a cat' }) },
    { what: 'a multipart edit form without model', status: 400, send: (app) => post(app, '/v1/images/edits').field('prompt', 'a cat').attach('image', Buffer.from('png'), 'cat.png') },
  ],
  "invalid_request_error: parameters.size must use '*' between width and height: '1024*1024', not '1024x1024'": [
    { what: "parameters.size with an 'x'", status: 400, send: (app) => post(app, '/v1/images/generations').send({ ...CONTRACT_TEXT('a cat'), parameters: { size: '1024x1024' } }) },
  ],
  'content_policy_violation: The prompt was refused by the content policy (violence).': [
    {
      what: 'a prompt the checker flags for violence',
      status: 400,
      options: { moderation: { check: () => ({ flagged: true, categories: ['violence'] }) } },
      send: (app) => post(app, '/v1/images/generations').send({ model: 'x-image-2.0', prompt: 'a violent scene' }),
    },
  ],
};

function keyOf(body: Documented): string {
  return `${body.error.code}: ${String(body.error.message)}`;
}

function post(app: Parameters<typeof request>[0], path: string): request.Test {
  return request(app).post(path).set('Authorization', `Bearer ${KEY_A}`);
}

/** The error bodies the pages show, and the texts that name a code value but could not be read. */
function documentedBodies(): { bodies: Documented[]; unreadable: string[] } {
  const bodies: Documented[] = [];
  const unreadable: string[] = [];
  const files = documentationFiles().filter((file) => !VENDOR_PAGES.has(file.name));
  const texts = [
    ...files.flatMap(codeBlocks).flatMap((block) => (block.lang === 'json' ? [{ at: `${block.file}:${block.line}`, text: block.code, after: '' }] : [])),
    ...files.flatMap(inlineCode).map((span) => ({ at: `${span.file}:${span.line}`, text: span.code, after: span.after })),
  ];
  for (const { at, text, after } of texts) {
    if (!/"code"\s*:\s*"/.test(text)) continue;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      unreadable.push(`${at}: ${text}`);
      continue;
    }
    const error = (body as { error?: unknown } | null)?.error;
    if (error === null || typeof error !== 'object' || typeof (error as { code?: unknown }).code !== 'string') continue;
    // the status a page states right after an inline body: `{ "error": … }` (400)
    const status = /^\s*\((\d{3})\)/.exec(after)?.[1];
    bodies.push({ at, error: error as Documented['error'], ...(status ? { status: Number(status) } : {}) });
  }
  return { bodies, unreadable };
}

// the docs do not depend on the Express major: checked once, in the Express 5 run
describe.skipIf(process.env.GATEWAY_EXPRESS === '4')('the error bodies README.md and docs/ show', () => {
  const { bodies, unreadable } = documentedBodies();

  it('are found, among them those of docs/routes.md, docs/errors.md and docs/content-safety.md, and each text that names a code is JSON', () => {
    expect(unreadable).toEqual([]);
    expect(new Set(bodies.map((body) => body.at.split(':')[0]))).toEqual(new Set(['docs/routes.md', 'docs/errors.md', 'docs/content-safety.md']));
  });

  it('each has a case that produces it', () => {
    expect(bodies.filter((body) => !CASES[keyOf(body)]).map((body) => `${body.at}: no case for ${keyOf(body)}`)).toEqual([]);
  });

  it.each(bodies.map((body) => [body.at, body] as const))('%s is the body the gateway answers for its case, and no upstream is called', async (_at, body) => {
    const cases = CASES[keyOf(body)];
    expect(cases, `${body.at}: no case for ${keyOf(body)}`).toBeDefined();
    for (const run of cases ?? []) {
      const gateway = await gatewayWith({
        fakes: { images: startFakePaidImages },
        resolve: (_input, { images }) => ({ provider: 'dashscope', baseURL: images.dashscopeBaseURL, apiKey: 'sk-upstream' }),
        ...run.options,
      });
      const response = await run.send(gateway.app);
      expect({ status: response.status, body: response.body as unknown }, run.what).toEqual({ status: body.status ?? run.status, body: { error: body.error } });
      expect(gateway.fakes.images.requests, run.what).toEqual([]);
    }
  });
});
