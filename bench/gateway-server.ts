// The gateway under test (child process): a host Express app with the router mounted, routing chat
// to the OpenAI-compatible upstream and image models to DashScope, both the bench upstream. It
// samples its own RSS every 2 ms so the bench can read the peak growth during a burst
// (GET /__bench/rss/reset, GET /__bench/rss/peak). Prints {"port"} when listening.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
// the built package, as a host app runs it (npm run bench builds first); typed from the source,
// so type checking a fresh clone needs no build. BENCH_SOURCE=1 imports the source (iterating).
const built = process.env.BENCH_SOURCE === '1' ? '../lib/index.ts' : '../dist/index.js';
const { createGatewayRouter, staticKeys } = (await import(built)) as typeof import('../lib/index.js');

const upstream = `http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`;
export const BENCH_KEY = 'sk-bench-0123456789';

const router = createGatewayRouter({
  verifyKey: staticKeys({ [BENCH_KEY]: { id: 'bench' } }),
  resolveUpstream: ({ model }) =>
    model.startsWith('x-image-') ? { provider: 'dashscope', baseURL: `${upstream}/api/v1`, apiKey: 'k', model: 'qwen-image-2.0' } : { provider: 'openai', baseURL: `${upstream}/v1`, apiKey: 'k' },
  // the bench image URLs are on loopback (a trusted upstream's private results); uploads are 5 MB
  allowPrivateResultUrls: true,
  limits: { downloadBytes: 64 * 1024 * 1024 },
});

let baseline = process.memoryUsage().rss;
let peak = baseline;
setInterval(() => {
  const rss = process.memoryUsage().rss;
  if (rss > peak) peak = rss;
}, 2).unref();
// a worker samples RSS too: the main thread's sampler cannot run while a request blocks the loop
const sharedPeak = new BigInt64Array(new SharedArrayBuffer(8));
const sampler = new Worker(
  `const { workerData } = require('node:worker_threads');
   const peak = new BigInt64Array(workerData);
   setInterval(() => { const rss = BigInt(process.memoryUsage.rss()); if (rss > Atomics.load(peak, 0)) Atomics.store(peak, 0, rss); }, 2);`,
  { eval: true, workerData: sharedPeak.buffer },
);
sampler.unref();
// the longest event-loop block: how late a 10 ms timer fired at worst
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

const app = express();
app.get('/__bench/rss/reset', (_req, res) => {
  (globalThis as { gc?: () => void }).gc?.();
  baseline = process.memoryUsage().rss;
  peak = baseline;
  Atomics.store(sharedPeak, 0, BigInt(baseline));
  loopDelay.reset();
  res.json({ baseline });
});
app.get('/__bench/rss/peak', (_req, res) => {
  const workerPeak = Number(Atomics.load(sharedPeak, 0));
  const highest = Math.max(peak, workerPeak);
  res.json({ baseline, peak: highest, growth: highest - baseline, loopMaxMs: loopDelay.max / 1e6 });
});
// RSS once the burst is over and garbage collected: memory the process keeps holding
app.get('/__bench/rss/settled', (_req, res) => {
  (globalThis as { gc?: () => void }).gc?.();
  res.json({ rss: process.memoryUsage().rss, growth: process.memoryUsage().rss - baseline });
});
app.use(router);
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
server.keepAliveTimeout = 60_000;
// a clean exit on SIGINT lets `--cpu-prof` write its profile (profiling the hot path)
process.on('SIGINT', () => process.exit(0));
