// A child process for the fault suite's leak check: a gateway in front of a silent upstream and healthy
// fakes serves failing and normal requests, then everything is closed and the process must exit by
// itself (no process.exit). Prints one JSON line: each request's outcome and the active resources
// once the gateway is closed (fakes still up) and once everything is.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Upstream } from '../../lib/index.js';
import { startFakeDashscope } from './fake-dashscope.js';
import { chatChunks, startFakeLlm } from './fake-llm.js';
import { startSilentServer } from './faulty-servers.js';
import { KEY_A, createTestGateway, listen } from './gateway-app.js';
import { postJson, rawRequest } from './raw-client.js';

const silent = await startSilentServer();
const dashscope = await startFakeDashscope();
const llm = await startFakeLlm();
llm.chunkDelayMs = 10;

const gateway = createTestGateway({
  limits: { downloadTimeoutMs: 1_000 },
  resolveUpstream: ({ model }): Upstream | null => {
    const key = 'sk-child-upstream';
    if (model === 'x-image-2.0') return { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: key, timeoutMs: 5_000 };
    if (model === 'x-image-2.0-silent') return { provider: 'dashscope', baseURL: `${silent.origin}/api/v1`, apiKey: key, timeoutMs: 300 };
    if (model === 'chat-ok') return { provider: 'openai', baseURL: llm.baseURL, apiKey: key, model: 'upstream-chat', timeoutMs: 5_000 };
    if (model === 'chat-stall') return { provider: 'openai', baseURL: llm.baseURL, apiKey: key, model: 'upstream-chat', timeoutMs: 300 };
    if (model === 'chat-silent') return { provider: 'openai', baseURL: `${silent.origin}/v1`, apiKey: key, timeoutMs: 300 };
    return null;
  },
});
const server = await listen(gateway.app);
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

const image = (model: string, extra: Record<string, unknown> = {}) => ({ model, input: { messages: [{ role: 'user', content: [{ text: 'a red square' }] }] }, ...extra });
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Say hello' }], ...extra });

const calls: Array<[string, string, unknown]> = [
  ['image silent', '/v1/images/generations', image('x-image-2.0-silent')],
  ['image silent b64', '/v1/images/generations', image('x-image-2.0-silent', { response_format: 'b64_json' })],
  ['chat silent', '/v1/chat/completions', chat('chat-silent')],
  ['chat stream silent', '/v1/chat/completions', chat('chat-silent', { stream: true })],
  ['image ok', '/v1/images/generations', image('x-image-2.0')],
  ['image ok b64', '/v1/images/generations', image('x-image-2.0', { response_format: 'b64_json' })],
  ['chat ok', '/v1/chat/completions', chat('chat-ok')],
  ['chat stream ok', '/v1/chat/completions', chat('chat-ok', { stream: true })],
];
const results: Record<string, { status: number; code?: string; text?: string }> = {};
await Promise.all(
  calls.map(async ([name, path, body]) => {
    const answer = await postJson(`${server.url}${path}`, body, { key: KEY_A, agent, deadlineMs: 4_000 });
    const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
    results[name] = { status: answer.status, ...(code ? { code } : {}), ...(path.includes('chat') && answer.status === 200 ? { text: answer.text } : {}) };
  }),
);

// a stream that stalls after its first chunk: the idle limit cuts it
llm.next((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chatChunks('upstream-chat', ['a'])[0]);
  return new Promise(() => {});
});
const stalled = await postJson(`${server.url}/v1/chat/completions`, chat('chat-stall', { stream: true }), { key: KEY_A, agent, deadlineMs: 4_000 });
results['chat stream stalled'] = { status: stalled.status, text: stalled.text };

// a client that gives up while the gateway waits on a silent upstream
// (the 100 ms deadline is the client giving up: it destroys the request, and the rejection is expected)
const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };
await rawRequest(server.url, { path: '/v1/images/generations', headers, body: JSON.stringify(image('x-image-2.0-silent')), deadlineMs: 100 }).catch(() => undefined);
await new Promise((resolve) => setTimeout(resolve, 50));

await server.close();
agent.destroy();
await gateway.close();
// The fakes still listen: a connection the gateway kept would keep a fake's side of it open. Give
// the closed sockets up to 1 s to finish closing, then take stock.
const openSockets = () => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;
for (let waited = 0; openSockets() > 0 && waited < 1_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
await new Promise((resolve) => setImmediate(resolve));
const afterGatewayClose = process.getActiveResourcesInfo();

await dashscope.close();
await llm.close();
await silent.close();
// let the destroyed sockets finish closing (no timer: a timer would be an active resource itself)
for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));

// which Express major this child ran (GATEWAY_EXPRESS=4 swaps it through express-major.ts)
const expressVersion = (JSON.parse(readFileSync(fileURLToPath(new URL('package.json', import.meta.resolve('express'))), 'utf8')) as { version: string }).version;
process.stdout.write(`${JSON.stringify({ results, afterGatewayClose, resources: process.getActiveResourcesInfo(), expressVersion })}\n`);
