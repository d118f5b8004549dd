// The SaaS host example (examples/saas-host/app.ts) driven with the official openai SDK, as its
// customers would: the host's JSON parser comes first for the whole app, its rate limiter runs after
// the gateway's authentication keyed by tenant, and the gateway logs through the host's pino with
// pino-http's request id (docs/getting-started.md "Your parsers first").
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOUNT_PATH, type SaasHost, createSaasHost } from '../../examples/saas-host/app.js';
import { type FakeDashscope, dashscopeError, startFakeDashscope } from '../helpers/fake-dashscope.js';
import { type FakeArk, startFakeArk } from '../helpers/fake-ark.js';
import { listen } from '../helpers/gateway-app.js';
import { TINY_PNG } from '../helpers/images.js';
import { rawSocket } from '../helpers/raw-client.js';

const ACME_1 = 'sk-acme-live-1';
const ACME_2 = 'sk-acme-live-2';
const GLOBEX = 'sk-globex-live-1';

/** A Data URL of a real PNG padded to about `bytes` (the gateway reads the type from the first bytes). */
const pngDataUrl = (bytes: number): string => `data:image/png;base64,${Buffer.concat([TINY_PNG, Buffer.alloc(Math.floor((bytes * 3) / 4) - TINY_PNG.length)]).toString('base64')}`;

/** A 115 kB JSON edit: three Data URLs of about 38 kB and the instruction. */
const editBody = {
  model: 'x-image-edit',
  prompt: 'placeholder',
  input: {
    messages: [
      {
        role: 'user',
        content: [
          { image: pngDataUrl(38_500) },
          { image: pngDataUrl(38_500) },
          { image: pngDataUrl(38_500) },
          { text: 'Put the subject of image 1 into the style of image 2 on the background of image 3' },
        ],
      },
    ],
  },
};

interface Host {
  host: SaasHost;
  url: string;
  lines: Array<Record<string, unknown>>;
  client(key: string): OpenAI;
  close(): Promise<void>;
}

/** The example app on fresh fakes, its pino writing into `lines` (a new rate limiter per host). */
async function startHost(dashscope: FakeDashscope, ark: FakeArk): Promise<Host> {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const host = createSaasHost({ logger: pino({ level: 'info' }, stream), dashscopeBaseURL: dashscope.baseURL, arkBaseURL: ark.baseURL });
  const server = await listen(host.app);
  return {
    host,
    url: server.url,
    lines,
    client: (key) => new OpenAI({ baseURL: `${server.url}${MOUNT_PATH}/v1`, apiKey: key, maxRetries: 0 }),
    close: async () => {
      await server.close();
      await host.gateway.close();
    },
  };
}

let dashscope: FakeDashscope;
let ark: FakeArk;
beforeAll(async () => {
  dashscope = await startFakeDashscope();
  ark = await startFakeArk();
});
afterAll(async () => {
  await dashscope.close();
  await ark.close();
});

describe('the host parser first (express.json() for the whole app, wrapped by skipGatewayRoutes)', () => {
  let saas: Host;
  beforeAll(async () => {
    saas = await startHost(dashscope, ark);
  });
  afterAll(async () => {
    await saas.close();
  });

  it('a 115 kB JSON edit with three Data URLs reaches the upstream, over the host parser 100 kB limit', async () => {
    dashscope.requests.length = 0;
    expect(JSON.stringify(editBody).length).toBeGreaterThan(115_000);
    const answer = await saas.client(ACME_1).post<OpenAI.ImagesResponse>('/images/generations', { body: editBody });
    expect(answer.data?.[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/results\//);
    const sent = dashscope.apiRequests()[0]?.json as { input: { messages: Array<{ content: unknown[] }> } };
    expect(sent.input.messages[0]!.content).toHaveLength(4);
  });

  it('without a key the answer is the gateway 401, before the body is read', async () => {
    dashscope.requests.length = 0;
    // the head and 1 kB of a 115 kB body, then silence: only a server that does not wait for the body answers
    const head = `POST ${MOUNT_PATH}/v1/images/generations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 115000\r\n\r\n`;
    const socket = await rawSocket(saas.url, head + '{"model":"x-image-edit",' + ' '.repeat(1_000));
    const received = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('}}')) resolve(text);
      });
      socket.on('error', reject);
    });
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { message: "Missing API key. Send the header 'Authorization: Bearer <API_KEY>'.", type: 'authentication_error', code: 'invalid_api_key', param: null },
    });
    expect(dashscope.apiRequests()).toHaveLength(0);
  });

  it("the host's own routes still get the host's parser and its own error handler", async () => {
    const saved = await request(saas.host.app).post('/notes').set('Authorization', `Bearer ${ACME_1}`).send({ text: 'hello' });
    expect(saved.status).toBe(201);
    expect(saved.body).toEqual({ saved: { text: 'hello' } });
    const tooLarge = await request(saas.host.app)
      .post('/notes')
      .set('Authorization', `Bearer ${ACME_1}`)
      .send({ text: 'x'.repeat(200_000) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ message: 'request entity too large' });
  });
});

describe('the host rate limiter after authentication (tenancy.afterAuthentication, express-rate-limit keyed by tenant)', () => {
  it('counts every key of a tenant together, answers the gateway 429 and calls no upstream', async () => {
    const saas = await startHost(dashscope, ark);
    try {
      // the free plan allows 5 a minute: two keys of one tenant share them
      for (const key of [ACME_1, ACME_2, ACME_1, ACME_2, ACME_1]) expect((await saas.client(key).models.list()).data.length).toBeGreaterThan(0);
      dashscope.requests.length = 0;
      const refused = await saas
        .client(ACME_2)
        .images.generate({ model: 'x-image-2.0', prompt: 'A lighthouse' })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      const limited = refused as InstanceType<typeof OpenAI.RateLimitError>;
      expect(limited.status).toBe(429);
      expect(limited.error).toEqual({ message: 'Your plan allows 5 requests a minute.', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
      expect(limited.headers.get('retry-after')).toBe('60');
      expect(limited.headers.get('content-type')).toMatch(/^application\/json/);
      expect(dashscope.apiRequests()).toHaveLength(0);
      // another tenant has its own budget
      const other = await saas.client(GLOBEX).images.generate({ model: 'x-image-2.0', prompt: 'A lighthouse' });
      expect(other.data).toHaveLength(1);
    } finally {
      await saas.close();
    }
  });

  it('a model outside the plan is the gateway 403 naming the plan', async () => {
    const saas = await startHost(dashscope, ark);
    try {
      const refused = await request(saas.host.app)
        .post(`${MOUNT_PATH}/api/v3/contents/generations/tasks`)
        .set('Authorization', `Bearer ${ACME_1}`)
        .send({ model: 'x-video', content: [{ type: 'text', text: 'a cat' }] });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: { message: 'The free plan does not include x-video.', type: 'permission_error', code: 'permission_denied', param: null } });
      expect(ark.apiRequests()).toHaveLength(0);
    } finally {
      await saas.close();
    }
  });
});

describe("the gateway logs through the host's pino", () => {
  it('a 5xx answer is one line with pino-http request id, which the client also gets', async () => {
    const saas = await startHost(dashscope, ark);
    try {
      dashscope.next((_request, res) => dashscopeError(res, 500, 'InternalError', 'upstream broke'));
      const failed = await saas
        .client(GLOBEX)
        .images.generate({ model: 'x-image-2.0', prompt: 'A lighthouse' })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      const apiError = failed as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.status).toBe(502);
      const requestId = apiError.requestID;
      expect(requestId).toBeTruthy();
      // the failed attempt's warning and the 502's error line, both with the id
      expect(saas.lines.find((line) => line.msg === 'upstream failed')).toMatchObject({ component: 'express-image-gateway', requestId, provider: 'dashscope', status: 502 });
      const gatewayLine = saas.lines.find((line) => line.msg === 'request answered 502');
      expect(gatewayLine).toMatchObject({ component: 'express-image-gateway', requestId, route: 'images.generations', caller: 'globex', status: 502 });
      // pino-http's line of the same request carries the same id
      const hostLine = saas.lines.find((line) => (line.req as { url?: string } | undefined)?.url === `${MOUNT_PATH}/v1/images/generations`);
      expect(String((hostLine?.req as { id?: unknown } | undefined)?.id)).toBe(requestId);
      expect(JSON.stringify(saas.lines)).not.toContain(GLOBEX);
    } finally {
      await saas.close();
    }
  });
});
