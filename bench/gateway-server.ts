// The gateway under test (child process): a host Express app with the router mounted, routing chat
// to the OpenAI-compatible upstream and image models to DashScope, both the bench upstream. Prints
// {"port"} when listening.
//
// BENCH_PROBES=0: a fresh host app like a user's, nothing else in the process (latency rounds).
// Otherwise probes.ts answers GET /__bench/rss/* (RSS peak, event-loop delay) for memory figures.
// BENCH_SCALE=N: the pool, queue and per-caller limits raised to N in-flight requests (the scale
// scenario; with the defaults most of such a load is refused by design).
import type { AddressInfo } from 'node:net';
import express from 'express';
import { installProbes } from './probes.js';
// the built package, as a host app runs it (npm run bench builds first); typed from the source,
// so type checking a fresh clone needs no build. BENCH_SOURCE=1 imports the source (iterating).
// BENCH_DIST=dir: another build (bench/ab.ts compares two builds side by side).
const built = process.env.BENCH_SOURCE === '1' ? '../lib/index.ts' : process.env.BENCH_DIST ? `${process.env.BENCH_DIST}/index.js` : '../dist/index.js';
const { createGatewayRouter, staticKeys } = (await import(built)) as typeof import('../lib/index.js');

const upstream = `http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`;
export const BENCH_KEY = 'sk-bench-0123456789';
const scale = Number(process.env.BENCH_SCALE ?? 0);

const router = createGatewayRouter({
  verifyKey: staticKeys({ [BENCH_KEY]: { id: 'bench' } }),
  resolveUpstream: ({ model }) =>
    model.startsWith('x-image-') ? { provider: 'dashscope', baseURL: `${upstream}/api/v1`, apiKey: 'k', model: 'qwen-image-2.0' } : { provider: 'openai', baseURL: `${upstream}/v1`, apiKey: 'k' },
  // the bench image URLs are on loopback (a trusted upstream's private results); uploads are 5 MB
  allow: { privateResultUrls: true },
  limits: { downloadBytes: 64 * 1024 * 1024, ...(scale > 0 ? { upstreamSockets: scale, upstreamQueue: scale, inFlightPerCaller: scale } : {}) },
});

const app = express();
if (process.env.BENCH_PROBES !== '0') {
  const probe = installProbes();
  app.use((req, res, next) => {
    if (!probe(req, res)) next();
  });
}
app.use(router);
// BENCH_BACKLOG: a longer accept queue for the scale scenario's bursts (as a server tuned for them)
const server = app.listen(0, '127.0.0.1', Number(process.env.BENCH_BACKLOG ?? 511), () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
server.keepAliveTimeout = 60_000;
// a clean exit on SIGINT lets `--cpu-prof` write its profile (profiling the hot path)
process.on('SIGINT', () => process.exit(0));
