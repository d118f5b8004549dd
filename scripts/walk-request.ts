// The child process of `npm run walk` (scripts/walk.ts): a host Express app with the gateway mounted
// from the per-file build of lib/, in front of a fake upstream on 127.0.0.1:0. It sends warm-up image
// requests, then takes V8 precise coverage around ONE more request (its answer, its usage event and
// the close of its response) and prints, as JSON on stdout, every script URL with the most calls any
// of its ranges counted in that window, and the functions of each that ran. Run by scripts/walk.ts only, as plain Node (no loader), so
// the coverage holds nothing but the request. docs/architecture.md "The walk of one image request"
import http, { type IncomingMessage } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createGatewayRouter, staticKeys, type Upstream } from '../lib/index.js';
import { startFakeDashscope } from '../spec/helpers/fake-dashscope.js';
import { startFakeOpenAI } from '../spec/helpers/fake-openai.js';
import type { FakeUpstream } from '../spec/helpers/fake-upstream.js';

/** One upstream wire format the walk is measured against. */
interface Variant {
  /** The caller-facing model of the measured request. */
  model: string;
  start(): Promise<FakeUpstream & { baseURL: string }>;
  upstream(baseURL: string): Upstream;
}

const UPSTREAM_KEY = 'sk-walk-upstream';
const CALLER_KEY = 'sk-walk-caller-0123456789abcdef';
const WARM_UPS = 8;

const VARIANTS: Readonly<Record<string, Variant>> = {
  openai: {
    model: 'gpt-image-1',
    start: startFakeOpenAI,
    upstream: (baseURL) => ({ provider: 'openai', baseURL, apiKey: UPSTREAM_KEY }),
  },
  dashscope: {
    model: 'x-image-2.0',
    start: startFakeDashscope,
    upstream: (baseURL) => ({ provider: 'dashscope', baseURL, apiKey: UPSTREAM_KEY, model: 'qwen-image-2.0' }),
  },
};

/** A function of a script that ran in the window: its name (empty when anonymous), where it starts in the built file, and its calls. */
export interface WalkFunction {
  name: string;
  offset: number;
  calls: number;
}

/** What the child prints: each script's URL, the most calls of any of its ranges in the window, and the functions that ran. */
export interface WalkCoverage {
  variant: string;
  scripts: Array<{ url: string; calls: number; functions: WalkFunction[] }>;
}

const name = process.argv[2] ?? '';
const variant: Variant = VARIANTS[name] ?? unknownVariant();

function unknownVariant(): never {
  throw new Error(`unknown variant "${name}": one of ${Object.keys(VARIANTS).join(', ')}`);
}

const fake = await variant.start();
// the measured request resolves these once its usage event is out and its response has closed
let usageSeen: () => void = () => {};
let responseClosed: () => void = () => {};
const gateway = createGatewayRouter({
  verifyKey: staticKeys({ [CALLER_KEY]: { id: 'walk-tenant' } }),
  resolveUpstream: ({ model }) => (model === variant.model ? variant.upstream(fake.baseURL) : null),
  onUsage: () => usageSeen(),
  // the fakes serve their result images from 127.0.0.1 (docs/security.md)
  allow: { privateResultUrls: true },
});
const app = express();
app.use((_req, res, next) => {
  // registered before the gateway's own listeners, all of which have run when this promise settles
  res.once('close', () => responseClosed());
  next();
});
app.use(gateway);
const server = app.listen(0, '127.0.0.1');
await new Promise<void>((resolve) => server.once('listening', () => resolve()));
const { port } = server.address() as AddressInfo;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One POST /v1/images/generations, read to its end; rejects unless it answered 200. */
async function generate(): Promise<void> {
  const body = JSON.stringify({ model: variant.model, prompt: 'A lighthouse at dusk' });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/images/generations',
        headers: { authorization: `Bearer ${CALLER_KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      resolve,
    );
    req.once('error', reject);
    req.end(body);
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  if (res.statusCode !== 200) throw new Error(`the gateway answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8')}`);
}

/** A request, and the events that end its work: the answer, the usage event, the response's close. */
async function walkOnce(): Promise<void> {
  const usage = new Promise<void>((resolve) => (usageSeen = resolve));
  const closed = new Promise<void>((resolve) => (responseClosed = resolve));
  await Promise.all([generate(), usage, closed]);
}

for (let index = 0; index < WARM_UPS; index += 1) await walkOnce();

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
// with callCount on, each take resets the counts: this one drops what ran before the window
await session.post('Profiler.takePreciseCoverage');
await walkOnce();
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();

const output: WalkCoverage = {
  variant: name,
  scripts: result.map((script) => ({
    url: script.url,
    calls: Math.max(0, ...script.functions.flatMap((fn) => fn.ranges.map((range) => range.count))),
    // a function's first range is the function as a whole; its count is how often it was called
    functions: script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0).map((fn) => ({ name: fn.functionName, offset: fn.ranges[0]!.startOffset, calls: fn.ranges[0]!.count })),
  })),
};
process.stdout.write(`${JSON.stringify(output)}\n`);

agent.destroy();
server.closeAllConnections();
server.close();
await gateway.close();
await fake.close();
