// A child process for the outbound-safety suite, run inside a network namespace with only `lo` and
// a private /etc/hosts (hooks.example.test and results.example.test -> 2606:4700::1, which the
// kernel refuses at connect() with ENETUNREACH; rebind.example.test -> 127.0.0.1). The gateway
// delivers callbacks and downloads results to those names, then must still answer a request.
// Prints one JSON line with what happened; a crash prints nothing and exits non-zero.
import type { Upstream } from '../../lib/index.js';
import { startFakeArk } from './fake-ark.js';
import { dashscopeSuccess, startFakeDashscope } from './fake-dashscope.js';
import { sendJson } from './fake-upstream.js';
import { KEY_A, createTestGateway, listen } from './gateway-app.js';
import { postJson } from './raw-client.js';

const ark = await startFakeArk();
const dashscope = await startFakeDashscope();
const logged: string[] = [];
const gateway = createTestGateway({
  allow: { privateResultUrls: false },
  callbacks: { pollIntervalsMs: { video: [20] }, retryBaseMs: 20, retryMaxMs: 40, maxAttempts: 2 },
  logger: { error: (_fields: unknown, message: string) => logged.push(message), warn: (_fields: unknown, message: string) => logged.push(message) },
  resolveUpstream: ({ route, model }): Upstream | null => {
    if (route === 'video.tasks') return { provider: 'ark', baseURL: ark.baseURL, apiKey: 'ark-key', model: 'seedance-upstream' };
    if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: 'ds-key' };
    return null;
  },
});
const server = await listen(gateway.app);
const post = (path: string, body: unknown) => postJson(`${server.url}${path}`, body, { key: KEY_A, deadlineMs: 10_000 });
const codeOf = (answer: { json?: unknown }) => (answer.json as { error?: { code?: string } } | undefined)?.error?.code;

// 1. a callback to a name whose only address the kernel refuses synchronously
const created = await post('/api/v3/contents/generations/tasks', {
  model: 'seedance',
  content: [{ type: 'text', text: 'a cat' }],
  callback_url: 'https://hooks.example.test/video',
});
const until = Date.now() + 20_000;
while (!logged.includes('callback delivery given up') && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));

// 2. a result URL on a name with a public address the kernel refuses: an ordinary failed download
dashscope.next((_request, res) => sendJson(res, 200, dashscopeSuccess(['https://results.example.test/r.png'])));
const unreachable = await post('/v1/images/generations', { model: 'x-image-2.0', prompt: 'a cat', response_format: 'b64_json' });

// 3. a result URL on a name that resolves to loopback: refused, never fetched
const port = new URL(dashscope.origin).port;
dashscope.next((_request, res) => sendJson(res, 200, dashscopeSuccess([`http://rebind.example.test:${port}/results/secret.png`])));
const rebound = await post('/v1/images/generations', { model: 'x-image-2.0', prompt: 'a cat', response_format: 'b64_json' });
const fetched = dashscope.requests.filter((request) => request.path.startsWith('/results/')).length;

// 4. the process is alive and serving
const after = await post('/v1/images/generations', { model: 'x-image-2.0', prompt: 'a cat' });

process.stdout.write(
  `${JSON.stringify({
    created: created.status,
    deliveryGivenUp: logged.includes('callback delivery given up'),
    unreachable: { status: unreachable.status, code: codeOf(unreachable) },
    rebound: { status: rebound.status, code: codeOf(rebound), message: (rebound.json as { error?: { message?: string } } | undefined)?.error?.message },
    fetchedResults: fetched,
    after: after.status,
  })}\n`,
);
await gateway.close();
await server.close();
await ark.close();
await dashscope.close();
