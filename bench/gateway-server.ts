// The gateway under test (child process): a host Express app with the router mounted, routing chat
// to the OpenAI-compatible upstream and image models to DashScope, both the bench upstream. It
// samples its own RSS every 2 ms so the bench can read the peak growth during a burst
// (GET /__bench/rss/reset, GET /__bench/rss/peak). Prints {"port"} when listening.
import type { AddressInfo } from 'node:net';
import express from 'express';
// the built package, as a host app runs it (npm run bench builds first); typed from the source,
// so type checking a fresh clone needs no build
const built = '../dist/index.js';
const { createGatewayRouter, staticKeys } = (await import(built)) as typeof import('../lib/index.js');

const upstream = `http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`;
export const BENCH_KEY = 'sk-bench-0123456789';

const router = createGatewayRouter({
  verifyKey: staticKeys({ [BENCH_KEY]: { id: 'bench' } }),
  resolveUpstream: ({ model }) =>
    model.startsWith('x-image-')
      ? { provider: 'dashscope', baseURL: `${upstream}/api/v1`, apiKey: 'k', model: 'qwen-image-2.0' }
      : { provider: 'openai', baseURL: `${upstream}/v1`, apiKey: 'k' },
  // the bench image URLs are on loopback; uploads are 5 MB
  limits: { downloadBytes: 64 * 1024 * 1024 },
});

let baseline = process.memoryUsage().rss;
let peak = baseline;
setInterval(() => {
  const rss = process.memoryUsage().rss;
  if (rss > peak) peak = rss;
}, 2).unref();

const app = express();
app.get('/__bench/rss/reset', (_req, res) => {
  (globalThis as { gc?: () => void }).gc?.();
  baseline = process.memoryUsage().rss;
  peak = baseline;
  res.json({ baseline });
});
app.get('/__bench/rss/peak', (_req, res) => {
  res.json({ baseline, peak, growth: peak - baseline });
});
app.use(router);
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
server.keepAliveTimeout = 60_000;
// a clean exit on SIGINT lets `--cpu-prof` write its profile (profiling the hot path)
process.on('SIGINT', () => process.exit(0));
