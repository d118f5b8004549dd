// Callback delivery on its own: the resolved address is checked again at delivery (a name that now
// points inside is refused and nothing is sent), the connection goes to the checked address, a
// redirect is not followed, and the Standard Webhooks headers are there.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamHttp } from '../../lib/transport/upstream-http.js';
import { resolvePublicAddress } from '../../lib/security/public-url.js';
import { CallbackDeliveryError, createCallbackDeliverer } from '../../lib/gateway/tasks/callback-delivery.js';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.js';

const SECRET = `whsec_${Buffer.from('delivery-spec-secret-0123456789ab').toString('base64')}`;
let receiver: FakeUpstream;
let http: UpstreamHttp;
const job = (url: string) => ({ eventId: 'evt_fixed', taskId: 'task_x', url, body: '{"id":"task_x","status":"running"}' });

beforeAll(async () => {
  receiver = await startFakeUpstream((request, res) => {
    if (request.path === '/moved') {
      res.writeHead(302, { location: '/hook' });
      res.end();
      return;
    }
    res.writeHead(204);
    res.end();
  });
  http = new UpstreamHttp();
});
afterAll(async () => {
  http.close();
  await receiver.close();
});

describe('resolvePublicAddress (callback targets)', () => {
  const resolver = (addresses: string[]) => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  it.each([
    ['a public address', ['93.184.216.34'], undefined],
    ['a private address', ['10.0.0.7'], /non-public/],
    ['one private among public ones', ['93.184.216.34', '127.0.0.1'], /non-public/],
    ['a v4-mapped loopback', ['::ffff:127.0.0.1'], /non-public/],
    ['the metadata address', ['169.254.169.254'], /non-public/],
  ])('%s', async (_name, addresses, error) => {
    const attempt = resolvePublicAddress('hooks.example.com', { allowPrivate: false }, resolver(addresses));
    if (error) await expect(attempt).rejects.toThrow(error);
    else await expect(attempt).resolves.toEqual({ address: addresses[0], family: 4 });
  });
});

describe('delivery', () => {
  it('refuses a host that now resolves inside, for good, and sends nothing', async () => {
    const before = receiver.requests.length;
    const deliverer = createCallbackDeliverer({ http, policy: { allowLocal: false }, timeoutMs: 1_000, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    const error = await deliverer.deliver(job('https://hooks.example.com/video')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallbackDeliveryError);
    expect((error as CallbackDeliveryError).retryable).toBe(false);
    expect(receiver.requests).toHaveLength(before);
  });

  it('connects to the checked address, whatever the name', async () => {
    // a name that does not exist anywhere: only the pinned address makes the request reach the receiver
    const port = new URL(receiver.origin).port;
    const deliverer = createCallbackDeliverer({ http, policy: { allowLocal: true }, signingSecret: SECRET, timeoutMs: 1_000, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    await deliverer.deliver(job(`http://callbacks.invalid:${port}/hook`));
    const sent = receiver.requests.at(-1)!;
    expect(sent.headers.host).toBe(`callbacks.invalid:${port}`);
    expect(sent.headers['webhook-id']).toBe('evt_fixed');
    expect(() => new Webhook(SECRET).verify(sent.body.toString(), sent.headers as Record<string, string>)).not.toThrow();
  });

  it('does not follow a redirect: it is a failed attempt', async () => {
    const deliverer = createCallbackDeliverer({ http, policy: { allowLocal: true }, timeoutMs: 1_000 });
    const before = receiver.requests.length;
    const error = await deliverer.deliver(job(`${receiver.origin}/moved`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallbackDeliveryError);
    expect((error as CallbackDeliveryError).retryable).toBe(true);
    expect((error as Error).message).toBe('callback receiver answered HTTP 302');
    expect(receiver.requests).toHaveLength(before + 1);
  });
});
