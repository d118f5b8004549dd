// What a bench child process reports about itself (GET /__bench/rss/reset|peak|settled|held): RSS
// sampled every 2 ms by the main thread AND a worker (the main thread's sampler cannot run while a
// request blocks the loop), the event-loop delay (max and p99), and the open file descriptors.
// Shared by the gateway host app and the bare proxy so the scale figures compare like with like.
// Installed only when measured: the 2 ms samplers cost CPU a user's host app does not spend, so
// latency rounds run without them (BENCH_PROBES=0).
import { readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export type Probe = (req: IncomingMessage, res: ServerResponse) => boolean;

export function installProbes(): Probe {
  let baseline = process.memoryUsage().rss;
  // after a forced collection at reset: what `held` compares with (bytes still referenced, no garbage)
  let baselineUsage = process.memoryUsage();
  let peak = baseline;
  // the main thread's samples also say where a peak sits: the JS heap (committed) or off-heap Buffers
  let peakHeap = baselineUsage.heapTotal;
  let peakExternal = baselineUsage.external;
  setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.rss > peak) peak = usage.rss;
    if (usage.heapTotal > peakHeap) peakHeap = usage.heapTotal;
    if (usage.external > peakExternal) peakExternal = usage.external;
  }, 2).unref();
  const sharedPeak = new BigInt64Array(new SharedArrayBuffer(8));
  const sampler = new Worker(
    `const { workerData } = require('node:worker_threads');
     const peak = new BigInt64Array(workerData);
     setInterval(() => { const rss = BigInt(process.memoryUsage.rss()); if (rss > Atomics.load(peak, 0)) Atomics.store(peak, 0, rss); }, 2);`,
    { eval: true, workerData: sharedPeak.buffer },
  );
  sampler.unref();
  // how late a 10 ms timer fired: the longest block and the p99 over the measured window
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
  const json = (res: ServerResponse, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  return (req, res) => {
    if (req.method !== 'GET' || !req.url?.startsWith('/__bench/')) return false;
    if (req.url === '/__bench/rss/reset' || req.url === '/__bench/rss/reset?gc=0') {
      // ?gc=0: the baseline as the process is, its collected pages still resident (a forced
      // collection releases free heap pages that the next requests touch again, a one-time growth)
      if (req.url === '/__bench/rss/reset') gc();
      baselineUsage = process.memoryUsage();
      baseline = baselineUsage.rss;
      peak = baseline;
      peakHeap = baselineUsage.heapTotal;
      peakExternal = baselineUsage.external;
      Atomics.store(sharedPeak, 0, BigInt(baseline));
      loopDelay.reset();
      json(res, { baseline });
    } else if (req.url === '/__bench/rss/peak') {
      const highest = Math.max(peak, Number(Atomics.load(sharedPeak, 0)));
      json(res, {
        baseline,
        peak: highest,
        growth: highest - baseline,
        heapTotalGrowth: peakHeap - baselineUsage.heapTotal,
        externalGrowth: peakExternal - baselineUsage.external,
        loopMaxMs: loopDelay.max / 1e6,
        loopP99Ms: loopDelay.percentile(99) / 1e6,
        fds: openFds(),
      });
    } else if (req.url === '/__bench/rss/held') {
      // what the requests in flight still reference: heap and off-heap (Buffers) growth after a collection
      const before = process.memoryUsage();
      gc();
      const now = process.memoryUsage();
      json(res, {
        beforeGc: {
          rss: before.rss - baselineUsage.rss,
          heapTotal: before.heapTotal - baselineUsage.heapTotal,
          heapUsed: before.heapUsed - baselineUsage.heapUsed,
          external: before.external - baselineUsage.external,
          arrayBuffers: before.arrayBuffers - baselineUsage.arrayBuffers,
        },
        heapUsed: now.heapUsed - baselineUsage.heapUsed,
        external: now.external - baselineUsage.external,
        arrayBuffers: now.arrayBuffers - baselineUsage.arrayBuffers,
        rss: now.rss - baselineUsage.rss,
      });
    } else if (req.url === '/__bench/rss/settled') {
      gc();
      json(res, { rss: process.memoryUsage().rss, growth: process.memoryUsage().rss - baseline });
    } else return false;
    return true;
  };
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return Number.NaN;
  }
}
