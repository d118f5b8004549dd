// `npm run bench:tenant` (or `npx tsx bench/tenant-controls.ts`): what the tenant controls add to a
// request (docs/benchmarks.md "Tenant controls"), with Redis (REDIS_URL, default redis://127.0.0.1:6379) and in
// memory. Two views:
// 1. the checks alone, as a paid create awaits them: the quota charge (requests + images, one
//    weighted consume each, in parallel) and the Idempotency-Key take (SET NX); p50/p99 per request;
// 2. end to end: the same image request through a host app with and without the controls (quotas
//    and idempotency on Redis), sequential on loopback, interleaved rounds; the p50 difference.
// Prints a table and one JSON line (`BENCH_TENANT {...}`). `--quick` runs fewer iterations.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { Quotas } from '../lib/gateway/tenancy/quotas.js';
import { resolveQuotas } from '../lib/gateway/tenancy/resolve-tenancy.js';
import { type IdempotencyStore, createGatewayRouter, memoryIdempotencyStore, staticKeys } from '../lib/index.js';
import { redisIdempotencyStore } from '../lib/redis.js';

const quick = process.argv.includes('--quick');
const ITERATIONS = quick ? 1_000 : 5_000;
const E2E_REQUESTS = quick ? 500 : 2_000;
const ROUNDS = quick ? 2 : 4;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `bench-tenant-${randomBytes(4).toString('hex')}:`;
const KEY = 'sk-bench-tenant-0123456789';
const silent = { info: () => {}, warn: () => {}, error: () => {} };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
}
const round = (ms: number): number => Math.round(ms * 1000) / 1000;

async function timeEach(iterations: number, work: (index: number) => Promise<unknown>): Promise<number[]> {
  for (let index = 0; index < 200; index += 1) await work(-index - 1); // warm-up
  const samples: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    const start = performance.now();
    await work(index);
    samples.push(performance.now() - start);
  }
  return samples;
}

async function checks(redis: Redis | undefined): Promise<Record<string, { p50: number; p99: number }>> {
  const where = redis ? 'redis' : 'memory';
  const quotas = new Quotas(resolveQuotas({ limits: { requestsPerMinute: 1e12, imagesPerMinute: 1e12 }, ...(redis ? { redis } : {}), prefix: `${PREFIX}quota:` }), silent, 48 * 3600_000);
  const store: IdempotencyStore = redis ? redisIdempotencyStore({ client: redis, prefix: `${PREFIX}idem:` }) : memoryIdempotencyStore();
  const caller = { id: 'tenant-bench' };
  const run = `${Date.now()}`;
  const charge = await timeEach(ITERATIONS, () => quotas.charge(caller, { requests: 1, images: 1 }));
  // each key is finished as the request it stands for would be (the write is not awaited by a request)
  const answer = {
    state: 'done' as const,
    fingerprint: 'fingerprint',
    answer: { status: 200, contentType: 'application/json', body: Buffer.from('{"created":1,"data":[{"url":"https://cdn.example/1.png"}]}').toString('base64') },
  };
  const finish = (key: string): void => void store.finish(key, answer, 60_000);
  const take = await timeEach(ITERATIONS, async (index) => {
    await store.begin(`${run}:${index}`, 'fingerprint', 60_000);
    finish(`${run}:${index}`);
  });
  const both = await timeEach(ITERATIONS, async (index) => {
    await Promise.all([quotas.charge(caller, { requests: 1, images: 1 }), store.begin(`${run}:both:${index}`, 'fingerprint', 60_000)]);
    finish(`${run}:both:${index}`);
  });
  const sequential = await timeEach(ITERATIONS, async (index) => {
    await store.begin(`${run}:seq:${index}`, 'fingerprint', 60_000);
    await quotas.charge(caller, { requests: 1, images: 1 });
    finish(`${run}:seq:${index}`);
  });
  return {
    [`${where}: quota charge (requests + images)`]: summary(charge),
    [`${where}: idempotency take (SET NX)`]: summary(take),
    [`${where}: both, as a paid create awaits them`]: summary(sequential),
    [`${where}: both, concurrently (lower bound)`]: summary(both),
  };
}

async function listen(app: express.Express): Promise<{ port: number; close(): void }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return { port: (server.address() as AddressInfo).port, close: () => server.close() };
}

async function endToEnd(redis: Redis): Promise<{ without: number; with: number; added: number }> {
  const upstream = http.createServer((_req, res) => {
    _req.resume();
    _req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"created":1,"data":[{"url":"https://cdn.example/1.png"}]}'));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const baseURL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const base = { verifyKey: staticKeys({ [KEY]: { id: 'tenant-bench' } }), resolveUpstream: () => ({ provider: 'openai' as const, baseURL, apiKey: 'k' }) };
  const plainRouter = createGatewayRouter({ ...base, idempotency: false });
  const controlledRouter = createGatewayRouter({
    ...base,
    tenancy: { quotas: { limits: { requestsPerMinute: 1e12, imagesPerMinute: 1e12 }, redis, prefix: `${PREFIX}e2e:` } },
    idempotency: { store: redisIdempotencyStore({ client: redis, prefix: `${PREFIX}e2e-idem:` }) },
  });
  const plain = await listen(express().use(plainRouter));
  const controlled = await listen(express().use(controlledRouter));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ model: 'dall-e-3', prompt: 'a fox' });
  let counter = 0;
  const post = (port: number, withKey: boolean): Promise<void> =>
    new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (withKey) headers['idempotency-key'] = `bench-${counter++}`;
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/images/generations', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  const without: number[] = [];
  const withControls: number[] = [];
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex += 1) {
    without.push(summary(await timeEach(E2E_REQUESTS / ROUNDS, () => post(plain.port, false))).p50);
    withControls.push(summary(await timeEach(E2E_REQUESTS / ROUNDS, () => post(controlled.port, true))).p50);
  }
  agent.destroy();
  plain.close();
  controlled.close();
  upstream.close();
  await plainRouter.close();
  await controlledRouter.close();
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return { without: median(without), with: median(withControls), added: round(median(withControls) - median(without)) };
}

async function main(): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const figures = { ...(await checks(undefined)), ...(await checks(redis)) };
    console.log(`tenant controls, ${ITERATIONS} sequential requests each (ms)`);
    console.log(`${'check'.padEnd(52)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}`);
    for (const [name, { p50, p99 }] of Object.entries(figures)) console.log(`${name.padEnd(52)} ${p50.toFixed(3).padStart(8)} ${p99.toFixed(3).padStart(8)}`);
    const e2e = await endToEnd(redis);
    console.log(`end to end, image request p50 (ms): without ${e2e.without.toFixed(3)}, with quotas + Idempotency-Key on Redis ${e2e.with.toFixed(3)}, added ${e2e.added.toFixed(3)}`);
    console.log(`BENCH_TENANT ${JSON.stringify({ checks: figures, endToEnd: e2e })}`);
  } finally {
    const keys = await redis.keys(`${PREFIX}*`);
    for (let start = 0; start < keys.length; start += 500) await redis.del(...keys.slice(start, start + 500));
    redis.disconnect();
  }
}

await main();
