// `npm run bench:tasks` (or `npx tsx bench/image-tasks.ts`): asynchronous image tasks under a burst
// (docs/benchmarks.md "Image tasks"), one process, tasks and quotas in memory:
// 1. 10,000 tasks submitted at once (100 client connections) against a simulated upstream whose every
//    generation takes 60 s: the submit latency (p50, p99), what a submit adds over an authenticated
//    request that does nothing (GET /v1/models, sequential, interleaved), the RSS per queued task and the
//    event-loop delay p99 while they are submitted and held; and when tenant B submits while tenant A's
//    9,990 wait, how long B's task waits for a slot (the fair queue);
// 2. the time until every task is terminal at the configured concurrency, measured with a short
//    generation (200 ms) and scaled to 60 s.
// Prints a table and one JSON line (`BENCH_TASKS {...}`). `--quick` submits 2,000. Run with
// `node --expose-gc --import tsx bench/image-tasks.ts` for the heap per queued task.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import express from 'express';
import { createGatewayRouter, staticKeys } from '../lib/index.js';

const quick = process.argv.includes('--quick');
const TASKS = quick ? 2_000 : 10_000;
const CONCURRENCY = 32;
const CLIENTS = 100;
const SEQUENTIAL = quick ? 300 : 1_000;
const HELD_WORK_MS = 60_000;
const SHORT_WORK_MS = 200;
const KEY_A = 'sk-bench-tenant-a-0123456789';
const KEY_B = 'sk-bench-tenant-b-0123456789';
const silent = { info: () => {}, warn: () => {}, error: () => {} };
const GENERATION = '/api/v1/services/aigc/multimodal-generation/generation';

interface Upstream {
  baseURL: string;
  workMs: number;
  started: number;
  close(): Promise<void>;
}

/** DashScope's synchronous generation (upstreams §1.3), each answer after `workMs`. */
async function startUpstream(workMs: number): Promise<Upstream> {
  const timers = new Set<NodeJS.Timeout>();
  const self = { baseURL: '', workMs, started: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url !== GENERATION) return res.writeHead(404).end();
      self.started += 1;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const body = JSON.stringify({
          output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `https://oss.example/${self.started}.png` }] } }] },
          usage: { width: 1024, height: 1024, image_count: 1 },
          request_id: `rq-${self.started}`,
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      }, self.workMs);
      timers.add(timer);
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  self.close = async () => {
    for (const timer of timers) clearTimeout(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return self;
}

interface Gateway {
  url: string;
  terminal: () => number;
  close(): Promise<void>;
}

async function startGateway(upstream: Upstream): Promise<Gateway> {
  let terminal = 0;
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' }, [KEY_B]: { id: 'tenant-b' } }),
    resolveUpstream: () => ({ provider: 'dashscope', baseURL: upstream.baseURL, apiKey: 'sk-up', model: 'qwen-image-2.0', timeoutMs: 600_000 }),
    logger: silent,
    allow: { privateResultUrls: true },
    limits: { inFlightPerCaller: 1_000, imageTasks: { concurrency: CONCURRENCY, maxQueued: TASKS * 2, maxQueuedPerCaller: TASKS * 2, maxQueueSeconds: 86_400 } },
    onUsage: (event) => {
      if (event.task) terminal += 1;
    },
  });
  const app = express();
  app.use(router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    terminal: () => terminal,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await router.close();
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });

function call(url: string, path: string, key: string, body?: string): Promise<{ status: number; ms: number; text: string }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      {
        method: body ? 'POST' : 'GET',
        agent,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json', prefer: 'respond-async', 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const submitBody = (index: number) => JSON.stringify({ model: 'x-image-2.0', prompt: `a lighthouse, take ${index}` });

/** Submits `count` tasks of tenant A over CLIENTS connections; the latency of each. */
async function burst(url: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const res = await call(url, '/v1/images/generations', KEY_A, submitBody(index));
      if (res.status !== 202) throw new Error(`submit ${index}: ${res.status} ${res.text.slice(0, 200)}`);
      latencies.push(res.ms);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, worker));
  return latencies;
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const ms = (value: number): number => Math.round(value * 1000) / 1000;
const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function held(): Promise<Record<string, number>> {
  const upstream = await startUpstream(HELD_WORK_MS);
  const gateway = await startGateway(upstream);
  // warm-up: connections, JIT
  for (let index = 0; index < 200; index += 1) await call(gateway.url, '/v1/models', KEY_B);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const latencies = await burst(gateway.url, TASKS - 10);
  const submitMs = performance.now() - started;
  gc?.();
  const afterQueue = process.memoryUsage().rss;
  const heapQueued = process.memoryUsage().heapUsed;
  // what a submit adds over an authenticated request that does nothing, both while the burst waits
  const submit: number[] = [];
  const baseline: number[] = [];
  for (let index = 0; index < SEQUENTIAL; index += 1) {
    baseline.push((await call(gateway.url, '/v1/models', KEY_B)).ms);
    submit.push((await call(gateway.url, '/v1/images/generations', KEY_B, submitBody(index))).ms);
  }
  // tenant B's tasks take a slot as soon as one frees: how long its last one waited (held work: none finish)
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  delay.disable();
  const result = {
    tasks: TASKS - 10 + SEQUENTIAL,
    submitP50Ms: ms(percentile(latencies, 50)),
    submitP99Ms: ms(percentile(latencies, 99)),
    submitsPerSecond: Math.round(((TASKS - 10) / submitMs) * 1000),
    addedP50Ms: ms(percentile(submit, 50) - percentile(baseline, 50)),
    baselineP50Ms: ms(percentile(baseline, 50)),
    rssBeforeMb: mb(before),
    rssQueuedMb: mb(afterQueue),
    rssPerQueuedTaskKb: Math.round((afterQueue - before) / (TASKS - 10) / 102.4) / 10,
    heapPerQueuedTaskKb: Math.round((heapQueued - heapBefore) / (TASKS - 10) / 102.4) / 10,
    loopDelayP99Ms: ms(delay.percentile(99) / 1e6),
    upstreamStarted: upstream.started,
  };
  await gateway.close();
  await upstream.close();
  return result;
}

async function drain(): Promise<Record<string, number>> {
  const upstream = await startUpstream(SHORT_WORK_MS);
  const gateway = await startGateway(upstream);
  const count = quick ? 1_000 : TASKS;
  const started = performance.now();
  await burst(gateway.url, count);
  while (gateway.terminal() < count) await new Promise((resolve) => setTimeout(resolve, 100));
  const measured = performance.now() - started;
  await gateway.close();
  await upstream.close();
  return {
    drainTasks: count,
    drainWorkMs: SHORT_WORK_MS,
    drainSeconds: Math.round(measured / 100) / 10,
    // one tenant's tasks hold at most perCallerConcurrency slots (half of CONCURRENCY by default)
    drainIdealSeconds: Math.round(((Math.ceil(count / (CONCURRENCY / 2)) * SHORT_WORK_MS) / 1000) * 10) / 10,
    // at 60 s a generation the same queue takes this long: the concurrency, not the gateway, decides
    drainAt60sHours: Math.round(((Math.ceil(TASKS / (CONCURRENCY / 2)) * 60) / 3600) * 10) / 10,
  };
}

const first = await held();
const second = await drain();
const all = { concurrency: CONCURRENCY, ...first, ...second };
console.table(all);
console.log(`BENCH_TASKS ${JSON.stringify(all)}`);
agent.destroy();
