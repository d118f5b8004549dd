// `npm run bench:routing` (npx tsx bench/routing-cost.ts): what choosing an upstream costs a request
// (docs/benchmarks.md "Routing"). One fake OpenAI-compatible upstream and one gateway process per mode:
//   off         - `routing: { breaker: false }`, one upstream: the baseline
//   ordered-1   - the default (`'ordered'`, breaker on), one upstream
//   ordered-5   - the default, five upstreams listed, the first healthy (the hot path: no Redis, no sort)
//   weighted-5  - `'weighted'` over five upstreams (a weighted shuffle per request)
//   latency-5   - `'latency'` over five upstreams (a sort by the latency estimates per request)
// Five upstreams are five credentials on the one fake, so each has its own health. Measured with
// autocannon on POST /v1/chat/completions (the lightest route, where a fixed cost shows most): p50 at
// 1 connection and req/s at 64, interleaved round by round; medians of the rounds. `--quick` runs
// fewer, shorter rounds. Prints a table and one JSON line (`ROUTING_COST {...}`).
import { fileURLToPath } from 'node:url';
import { benchChildren, measureChat, median, printPort, serveUpstream } from './chat-bench-processes.js';

const KEY = 'sk-bench-routing-0123456789';
const MODES = ['off', 'ordered-1', 'ordered-5', 'weighted-5', 'latency-5'] as const;
type Mode = (typeof MODES)[number];
const role = process.argv[2];

/** A host app with the gateway, in one routing mode. */
async function serveGateway(mode: Mode, upstreamPort: string): Promise<void> {
  const express = (await import('express')).default;
  const { createGatewayRouter, staticKeys } = await import('../lib/index.js');
  const count = mode.endsWith('-5') ? 5 : 1;
  const upstreams = Array.from({ length: count }, (_, index) => ({ provider: 'openai' as const, baseURL: `http://127.0.0.1:${upstreamPort}/v1`, apiKey: `sk-upstream-${index}` }));
  const strategy = mode === 'weighted-5' ? 'weighted' : mode === 'latency-5' ? 'latency' : 'ordered';
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY]: { id: 'bench' } }),
    resolveUpstream: () => upstreams,
    limits: { inFlightPerCaller: 1_000 },
    telemetry: false,
    logger: false,
    routing: mode === 'off' ? { breaker: false } : { strategy },
  });
  const app = express();
  app.use(router);
  const server = app.listen(0, '127.0.0.1', () => printPort(server));
  server.keepAliveTimeout = 30_000;
}

const { start, stop } = benchChildren(fileURLToPath(import.meta.url));

/**
 * The routing steps a request takes (order the list, admit the first, record its answer), timed in
 * process over many requests: the cost itself, below what the end-to-end figures can resolve on a
 * busy machine. Nanoseconds per request, the median of 5 runs.
 */
async function stepsPerRequest(): Promise<Record<Mode, number>> {
  const { UpstreamHealth } = await import('../lib/gateway/routing/upstream-health.js');
  const { Telemetry } = await import('../lib/telemetry/telemetry.js');
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  const figures = {} as Record<Mode, number>;
  for (const mode of MODES) {
    const count = mode.endsWith('-5') ? 5 : 1;
    const upstreams = Array.from({ length: count }, (_, index) => ({ provider: 'openai' as const, baseURL: 'http://127.0.0.1:1/v1', apiKey: `sk-upstream-${index}` }));
    const strategy = mode === 'weighted-5' ? 'weighted' : mode === 'latency-5' ? 'latency' : 'ordered';
    const breaker =
      mode === 'off' ? undefined : { failures: 5, failureRate: 0.5, windowMs: 60_000, minCalls: 20, cooldownMs: 30_000, accountCooldownMs: 300_000, maxRetryAfterMs: 300_000, minCallers: 3 };
    const health = new UpstreamHealth({ strategy, breaker, explore: 0.05, now: Date.now, random: Math.random }, { logger: silent, telemetry: Telemetry.off });
    const runs: number[] = [];
    for (let run = 0; run < 6; run++) {
      const rounds = 200_000;
      const started = process.hrtime.bigint();
      for (let round = 0; round < rounds; round++) {
        const order = health.order(upstreams, 'chat.completions', 'chat-bench', strategy);
        const admission = health.admit(order[0]!, 'chat.completions', 'chat-bench')!;
        health.succeeded(admission, 1);
      }
      // the first run warms the JIT and is not counted
      if (run > 0) runs.push(Number(process.hrtime.bigint() - started) / rounds);
    }
    figures[mode] = Math.round(median(runs));
  }
  return figures;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = quick ? 2 : 3;
  const seconds = quick ? 1 : 3;
  try {
    const upstream = await start(['--upstream']);
    const ports = Object.fromEntries(await Promise.all(MODES.map(async (mode) => [mode, await start(['--gateway', mode, String(upstream)])] as const))) as Record<Mode, number>;
    for (const mode of MODES) await measureChat(ports[mode], KEY, 1, 8); // warm-up: JIT, sockets
    const p50s: Record<Mode, number[]> = { off: [], 'ordered-1': [], 'ordered-5': [], 'weighted-5': [], 'latency-5': [] };
    const rpss: Record<Mode, number[]> = { off: [], 'ordered-1': [], 'ordered-5': [], 'weighted-5': [], 'latency-5': [] };
    for (let round = 0; round < rounds; round += 1) {
      for (const mode of MODES) p50s[mode].push((await measureChat(ports[mode], KEY, seconds, 1)).p50);
      for (const mode of MODES) rpss[mode].push((await measureChat(ports[mode], KEY, seconds, 64)).rps);
    }
    const figures = Object.fromEntries(MODES.map((mode) => [mode, { p50Ms: +median(p50s[mode]).toFixed(3), rps: Math.round(median(rpss[mode])) }])) as Record<Mode, { p50Ms: number; rps: number }>;
    console.log(`routing cost, POST /v1/chat/completions, median of ${rounds} rounds of ${seconds} s`);
    console.log('mode          p50 ms (c=1)   vs off     req/s (c=64)   vs off');
    for (const mode of MODES) {
      const { p50Ms, rps } = figures[mode];
      const p50Delta = ((p50Ms - figures.off.p50Ms) * 1000).toFixed(0);
      const rpsDelta = (((rps - figures.off.rps) / figures.off.rps) * 100).toFixed(1);
      console.log(`${mode.padEnd(12)}  ${p50Ms.toFixed(3).padStart(12)}   ${p50Delta.padStart(5)} µs   ${String(rps).padStart(12)}   ${rpsDelta.padStart(5)} %`);
    }
    const steps = await stepsPerRequest();
    console.log('routing steps in process (order, admit, record), ns per request:');
    for (const mode of MODES) console.log(`${mode.padEnd(12)}  ${String(steps[mode]).padStart(6)} ns`);
    console.log(`ROUTING_COST ${JSON.stringify({ ...figures, stepsNs: steps })}`);
  } finally {
    stop();
  }
}

if (role === '--upstream') serveUpstream();
else if (role === '--gateway') await serveGateway(process.argv[3] as Mode, process.argv[4]!);
else await main();
