// `npm run bench:telemetry` (npx tsx bench/telemetry-cost.ts): what telemetry costs a request
// (docs/benchmarks.md "Telemetry"). One fake OpenAI-compatible upstream and three gateways, each in its own process:
//   off  - `telemetry: false`, the very code path taken when @opentelemetry/api is not installed
//   noop - the API installed, no SDK registered (the default for a host without telemetry)
//   sdk  - the real SDK registered: every span recorded (batched to an exporter that drops them),
//          every metric aggregated
// measured with autocannon on POST /v1/chat/completions (the lightest route, where a fixed cost shows
// most), interleaved round by round; medians of the rounds. `--quick` runs fewer, shorter rounds.
// Prints a table and one JSON line (`TELEMETRY_COST {...}`). It does not use bench/run.ts; its processes
// and measure are chat-bench-processes.ts, shared with routing-cost.ts.
import { fileURLToPath } from 'node:url';
import { type ChatSample, benchChildren, measureChat, median, printPort, serveUpstream } from './chat-bench-processes.js';

const KEY = 'sk-bench-telemetry-0123456789';
const MODES = ['off', 'noop', 'sdk'] as const;
type Mode = (typeof MODES)[number];
const role = process.argv[2];

/** A host app with the gateway, in one telemetry mode. */
async function serveGateway(mode: Mode, upstreamPort: string): Promise<void> {
  if (mode === 'sdk') {
    const { context, metrics, propagation, trace } = await import('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
    const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
    // an exporter that drops what it is given: the cost measured is the gateway's and the SDK's, not an export's
    const exporter = { export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }), shutdown: () => Promise.resolve() };
    class Reader extends MetricReader {
      protected override onForceFlush = (): Promise<void> => Promise.resolve();
      protected override onShutdown = (): Promise<void> => Promise.resolve();
    }
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new Reader()] }));
  }
  const express = (await import('express')).default;
  const { createGatewayRouter, staticKeys } = await import('../lib/index.js');
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY]: { id: 'bench' } }),
    resolveUpstream: () => ({ provider: 'openai', baseURL: `http://127.0.0.1:${upstreamPort}/v1`, apiKey: 'sk-upstream' }),
    limits: { inFlightPerCaller: 1_000 },
    ...(mode === 'off' ? { telemetry: false as const } : {}),
  });
  const app = express();
  app.use(router);
  const server = app.listen(0, '127.0.0.1', () => printPort(server));
  server.keepAliveTimeout = 30_000;
}

const { start, stop } = benchChildren(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = quick ? 2 : 5;
  const seconds = quick ? 1 : 3;
  try {
    const upstream = await start(['--upstream']);
    const ports = Object.fromEntries(await Promise.all(MODES.map(async (mode) => [mode, await start(['--gateway', mode, String(upstream)])] as const))) as Record<Mode, number>;
    for (const mode of MODES) await measureChat(ports[mode], KEY, 1, 8); // warm-up: JIT, sockets, instruments
    const samples: Record<Mode, ChatSample[]> = { off: [], noop: [], sdk: [] };
    for (let round = 0; round < rounds; round += 1) for (const mode of MODES) samples[mode].push(await measureChat(ports[mode], KEY, seconds, 8));
    const figures = Object.fromEntries(
      MODES.map((mode) => [
        mode,
        { rps: Math.round(median(samples[mode].map((s) => s.rps))), p50Ms: +median(samples[mode].map((s) => s.p50)).toFixed(3), p99Ms: +median(samples[mode].map((s) => s.p99)).toFixed(3) },
      ]),
    ) as Record<Mode, { rps: number; p50Ms: number; p99Ms: number }>;
    console.log(`telemetry cost, POST /v1/chat/completions, 8 connections, median of ${rounds} rounds of ${seconds} s`);
    console.log('mode   req/s    p50 ms   p99 ms   req/s vs off');
    for (const mode of MODES) {
      const { rps, p50Ms, p99Ms } = figures[mode];
      console.log(
        `${mode.padEnd(6)} ${String(rps).padStart(6)}   ${p50Ms.toFixed(3).padStart(6)}   ${p99Ms.toFixed(3).padStart(6)}   ${(((rps - figures.off.rps) / figures.off.rps) * 100).toFixed(1).padStart(6)} %`,
      );
    }
    console.log(`TELEMETRY_COST ${JSON.stringify(figures)}`);
  } finally {
    stop();
  }
}

if (role === '--upstream') serveUpstream();
else if (role === '--gateway') await serveGateway(process.argv[3] as Mode, process.argv[4]!);
else await main();
