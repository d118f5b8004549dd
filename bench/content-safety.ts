// `npm run bench:moderation` (or `npx tsx bench/content-safety.ts`): what the moderation policy adds to an
// image request (docs/benchmarks.md "Content safety"), against a checker that answers at once, so the
// figure is the gateway's own work (the policy lookup, the awaits, the output image decoded and handed over):
// 1. sequential image generations on loopback through four routers in interleaved rounds: no `moderation`
//    option, a policy function that answers null (per tenant: off), the prompt checked, and the prompt and
//    output images checked; the p50 of each and the difference to the first;
// 2. a stream with two partial images: the time to its first image event without output checks (the first
//    partial) and with them (partials withheld: the whole image, checked), the cost of that choice; the
//    upstream makes the image at the same pace either way (streamed, or answered whole once done).
// Prints a table and one JSON line (`BENCH_MODERATION {...}`). `--quick` runs fewer requests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type GatewayOptions, createGatewayRouter, staticKeys } from '../lib/index.js';

const quick = process.argv.includes('--quick');
const REQUESTS = quick ? 600 : 3_000;
const ROUNDS = quick ? 3 : 6;
const STREAMS = quick ? 20 : 60;
// a streamed generation: two partials, then the image, each this far apart
const STEP_MS = 20;
const KEY = 'sk-bench-moderation-0123456789';
const SLOW = 'a slow fox';
// a 1x1 PNG, as a gpt-image answer carries it
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const ANSWER = JSON.stringify({ created: 1, data: [{ b64_json: PNG }] });

const round = (ms: number): number => Math.round(ms * 1000) / 1000;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An OpenAI-compatible image upstream: JSON at once, or (stream: true) two partials and the image, STEP_MS apart. */
async function startUpstream(): Promise<{ baseURL: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { stream?: boolean; prompt?: string };
      // the stream's prompt asked whole takes what its stream takes: the image is made at the same pace
      if (body.stream !== true) return void sleep(body.prompt === SLOW ? 3 * STEP_MS : 0).then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      void (async () => {
        for (let index = 0; index < 2; index += 1) {
          await sleep(STEP_MS);
          res.write(`event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', b64_json: PNG, partial_image_index: index })}\n\n`);
        }
        await sleep(STEP_MS);
        res.end(`event: image_generation.completed\ndata: ${JSON.stringify({ type: 'image_generation.completed', b64_json: PNG, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } })}\n\n`);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}

async function listen(options: Partial<GatewayOptions>, baseURL: string): Promise<{ port: number; close(): Promise<void> }> {
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY]: { id: 'tenant-bench' } }),
    resolveUpstream: () => ({ provider: 'openai', baseURL, apiKey: 'k' }),
    idempotency: false,
    ...options,
  });
  const server = express().use(router).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.close();
      await router.close();
    },
  };
}

/** One POST; resolves with the ms to its first body byte and to its end. */
function post(port: number, agent: http.Agent, body: string): Promise<{ first: number; total: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/images/generations',
        agent,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let first = 0;
        res.on('data', () => (first ||= performance.now() - start));
        res.on('end', () => (res.statusCode === 200 ? resolve({ first, total: performance.now() - start }) : reject(new Error(`status ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const upstream = await startUpstream();
  const instant = () => ({ flagged: false, categories: [] });
  const configs: Array<[string, Partial<GatewayOptions>]> = [
    ['no moderation option', {}],
    ['policy function answers null', { moderation: () => null }],
    ['prompt checked', { moderation: { check: instant } }],
    ['prompt + output images checked', { moderation: { check: instant, outputImages: true } }],
  ];
  const servers = await Promise.all(configs.map(([, options]) => listen(options, upstream.baseURL)));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ model: 'gpt-image-1', prompt: 'a fox in the snow' });
  const p50s: number[][] = configs.map(() => []);
  try {
    for (const server of servers) for (let index = 0; index < 200; index += 1) await post(server.port, agent, body); // warm-up
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex += 1) {
      for (const [at, server] of servers.entries()) {
        const samples: number[] = [];
        for (let index = 0; index < REQUESTS / ROUNDS; index += 1) samples.push((await post(server.port, agent, body)).total);
        p50s[at]!.push(median(samples));
      }
    }
    const figures = configs.map(([name], at) => ({ name, p50: round(median(p50s[at]!)), added: round(median(p50s[at]!) - median(p50s[0]!)) }));
    const streamBody = JSON.stringify({ model: 'gpt-image-1', prompt: SLOW, stream: true, partial_images: 2 });
    const firstEvent = async (port: number): Promise<number> => {
      const samples: number[] = [];
      for (let index = 0; index < STREAMS; index += 1) samples.push((await post(port, agent, streamBody)).first);
      return round(median(samples));
    };
    const stream = { withoutOutputChecks: await firstEvent(servers[0]!.port), withOutputChecks: await firstEvent(servers[3]!.port) };
    console.log(`image generation p50 on loopback, ${REQUESTS} sequential requests per router in ${ROUNDS} interleaved rounds (ms)`);
    for (const { name, p50, added } of figures) console.log(`${name.padEnd(34)} ${p50.toFixed(3).padStart(8)}  added ${added.toFixed(3).padStart(7)}`);
    console.log(`stream with 2 partials ${STEP_MS} ms apart, first event p50 (ms): without output checks ${stream.withoutOutputChecks}, with them ${stream.withOutputChecks}`);
    console.log(`BENCH_MODERATION ${JSON.stringify({ requests: figures, stream })}`);
  } finally {
    agent.destroy();
    for (const server of servers) await server.close();
    upstream.close();
  }
}

await main();
