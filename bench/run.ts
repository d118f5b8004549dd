// `npm run bench`: the fake upstream, a bare Node reverse proxy (the floor of any Node proxy), a
// naive `express.json()` proxy in a host Express app (the Express floor, express-floor.ts) and a
// host Express app with the gateway, each in its own process on loopback, measured side by side with
// autocannon, interleaved round by round; medians of the rounds. Prints a table and one JSON line
// (`BENCH_RESULT {...}`), then the targets with their measured values (target, measured,
// pass/fail). `--quick` runs fewer, shorter rounds; `--only=latency|stream|scale|memory|webhooks|provenance`
// one part (webhooks: vendor webhooks against polling, bench/vendor-webhooks.ts; provenance: bench/provenance-cost.ts).
//
// What is measured is what a client sees: latency to the end of each answer, a stream's first BODY
// byte (not its headers), against a fresh host app with nothing else in it (BENCH_PROBES=0: the
// RSS and loop-delay samplers run only in the processes whose memory is measured).
//
// Latency percentiles come from autocannon's per-response timings (its own histogram keeps whole
// milliseconds, too coarse for sub-millisecond overhead).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { measureInboundBodies, printInboundFigures } from './inbound-bodies.js';
import { measureMultipartEdits, printMultipartFigures } from './multipart-edits.js';
import { cpuTimeUs } from './process-cpu.js';
import { measureProvenance, printProvenanceFigures } from './provenance-cost.js';
import { measureVendorWebhooks, printVendorWebhookFigures } from './vendor-webhooks.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const SECONDS = quick ? 1 : 2;
const KEY = 'sk-bench-0123456789';
const children: ChildProcess[] = [];
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
const part = (name: string): boolean => only === undefined || only.split(',').includes(name);

/** Port -> process id of the servers started here: their CPU time is read from /proc. */
const pids = new Map<number, number>();

async function start(file: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<number> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (line: Buffer) => {
      const { port } = JSON.parse(line.toString()) as { port: number };
      pids.set(port, child.pid!);
      resolve(port);
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

interface Target {
  name: 'direct' | 'bare' | 'floor' | 'gateway';
  url: string;
  body: string;
}

interface Sample {
  p50: number;
  p99: number;
  rps: number;
  /**
   * CPU time (user + system, from /proc) the serving process spent per answered request: steadier
   * than req/s on a shared machine, and what req/s at 64 connections is bound by when the client,
   * the upstream and the proxy share the cores.
   */
  cpuUs: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function load(target: Target, connections: number): Promise<Sample> {
  const latencies: number[] = [];
  const pid = pids.get(Number(new URL(target.url).port));
  const cpuBefore = cpuTimeUs(pid);
  const instance = autocannon({
    url: target.url,
    method: 'POST',
    connections,
    duration: SECONDS,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: target.body,
  });
  // the instance is also an EventEmitter (autocannon's typings only show the promise)
  (instance as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200) latencies.push(ms);
  });
  const result = await instance;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  latencies.sort((a, b) => a - b);
  const cpuUs = (cpuTimeUs(pid) - cpuBefore) / Math.max(1, latencies.length);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), rps: latencies.length / SECONDS, cpuUs };
}

/** Rounds of direct, bare, floor, gateway in turn; medians per target. */
async function compare(targets: Target[], connections: number): Promise<Record<Target['name'], Sample>> {
  const rounds: Record<string, Sample[]> = {};
  for (const target of targets) await load(target, connections); // warm-up, not counted
  for (let round = 0; round < ROUNDS; round += 1) {
    // the order turns every round: no target always runs right after the same other one
    for (const target of round % 2 ? [...targets].reverse() : targets) (rounds[target.name] ??= []).push(await load(target, connections));
  }
  const summary = {} as Record<Target['name'], Sample>;
  for (const target of targets) {
    const samples = rounds[target.name]!;
    summary[target.name] = { p50: median(samples.map((s) => s.p50)), p99: median(samples.map((s) => s.p99)), rps: median(samples.map((s) => s.rps)), cpuUs: median(samples.map((s) => s.cpuUs)) };
  }
  return summary;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Timing {
  status: number;
  /** The response headers arrived. */
  headersMs: number;
  /** The first body byte arrived: what a client waits for. */
  firstByteMs: number;
  /** When each SSE event (counted by its `data:` line) was complete. */
  eventsMs: number[];
  totalMs: number;
}

function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let headersMs = 0;
    let firstByteMs = 0;
    const eventsMs: number[] = [];
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      headersMs = performance.now() - started;
      res.on('data', (chunk: Buffer) => {
        const now = performance.now() - started;
        if (firstByteMs === 0) firstByteMs = now;
        for (let at = chunk.indexOf('\n\n'); at !== -1; at = chunk.indexOf('\n\n', at + 2)) eventsMs.push(now);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headersMs, firstByteMs, eventsMs, totalMs: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface StreamFigures {
  headers: number;
  firstByte: number;
  /** Median arrival of each event. */
  events: number[];
  /**
   * The whole (non-streamed) chat answer's first body byte through the same client, each request
   * after as long a quiet spell as a stream request gets: the stream's own cost is the difference.
   * autocannon's p50 at 1 connection (the latency table) times back-to-back requests in a warm
   * process; a request that comes after ~40 ms of quiet meets a colder process (caches, the idle
   * CPU), in the gateway and the bare proxy alike.
   */
  wholeFirstByte: number;
}

/**
 * Streams through each target in turn; medians of header time, first body byte and each event.
 * Every few rounds, a whole answer (`wholeBody`) through each target after a quiet spell as long as a stream.
 */
async function ttfb(targets: Target[], wholeBody: string): Promise<Record<Target['name'], StreamFigures>> {
  const samples: Record<string, Timing[]> = {};
  const whole: Record<string, number[]> = {};
  const runs = quick ? 60 : 200;
  for (let i = 0; i < runs + 20; i += 1) {
    for (const target of i % 2 ? [...targets].reverse() : targets) {
      const result = await post(target.url, target.body);
      if (result.status !== 200) throw new Error(`stream ${target.name}: HTTP ${result.status}`);
      if (i >= 20) (samples[target.name] ??= []).push(result);
    }
    if (i >= 20 && i % 4 === 0) {
      for (const target of targets) {
        await new Promise((resolve) => setTimeout(resolve, 40));
        const result = await post(target.url, wholeBody);
        if (result.status !== 200) throw new Error(`whole answer ${target.name}: HTTP ${result.status}`);
        (whole[target.name] ??= []).push(result.firstByteMs);
      }
    }
  }
  const figures = (timings: Timing[], wholeFirstBytes: number[]): StreamFigures => {
    const events = Math.min(...timings.map((t) => t.eventsMs.length));
    return {
      headers: median(timings.map((t) => t.headersMs)),
      firstByte: median(timings.map((t) => t.firstByteMs)),
      events: Array.from({ length: events }, (_, index) => median(timings.map((t) => t.eventsMs[index]!))),
      wholeFirstByte: median(wholeFirstBytes),
    };
  };
  return Object.fromEntries(targets.map((target) => [target.name, figures(samples[target.name]!, whole[target.name]!)])) as Record<Target['name'], StreamFigures>;
}

/**
 * Peak RSS growth of a burst, each run in a fresh gateway process: memory a process freed earlier
 * stays in its RSS and would hide the growth of the next burst.
 */
async function rssGrowth(env: Record<string, string>, burst: (gateway: string) => Promise<unknown>, warm?: (gateway: string) => Promise<unknown>): Promise<number> {
  const growths: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const port = await start('gateway-server.ts', env, ['--expose-gc']);
    const child = children.at(-1)!;
    const gateway = `http://127.0.0.1:${port}`;
    // warm: the first request loads code paths, which is not what is measured
    await post(`${gateway}/v1/images/generations`, JSON.stringify({ model: 'x-image-2.0', prompt: 'warm' }));
    // and a small request of the measured kind: its first use loads code paths too (a one-time cost)
    await warm?.(gateway);
    await fetch(`${gateway}/__bench/rss/reset`);
    await burst(gateway);
    await new Promise((resolve) => setTimeout(resolve, 20));
    growths.push(((await (await fetch(`${gateway}/__bench/rss/peak`)).json()) as { growth: number }).growth);
    child.kill();
  }
  return median(growths);
}

interface ScaleFigures {
  target: 'bare' | 'gateway';
  inFlight: number;
  /** The most requests the upstream held at once: really in flight through the proxy together. */
  heldAtOnce: number;
  statuses: Record<string, number>;
  rampMs: number;
  totalMs: number;
  /** Open file descriptors of the proxy process while it holds the load. */
  fds: number;
  rssGrowth: number;
  /** Peak RSS growth over the requests held at once (not over those sent: a slow ramp holds fewer). */
  rssPerRequest: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

/** The most file descriptors a child process may open (the soft limit it inherits). */
function fileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((row) => row.startsWith('Max open files'));
  return Number(line?.split(/\s+/)[3] ?? 1024);
}

/**
 * `inFlight` image requests held by one proxy process in front of an upstream that answers after
 * 5 s: a fresh upstream, proxy and load client (three processes, three file tables) per run.
 * `scaled`: the pool, queue and per-caller limits raised to `inFlight` (false: the defaults).
 */
async function holdSlow(target: 'bare' | 'gateway', inFlight: number, scaled = true): Promise<ScaleFigures> {
  const mark = children.length;
  // every listener with an accept queue of 4096 (net.core.somaxconn here): the default 511 drops
  // connections of a 10,000 burst while the process is busy, which measures the client, not the proxy
  const upstreamPort = await start('upstream-server.ts', { BENCH_DELAY_MS: '5000', BENCH_IMAGE_BYTES: '1024', BENCH_BACKLOG: '4096' });
  const env = { BENCH_UPSTREAM_PORT: String(upstreamPort), BENCH_PROBES: '1', BENCH_BACKLOG: '4096', ...(scaled ? { BENCH_SCALE: String(inFlight) } : {}) };
  const port = await start(target === 'gateway' ? 'gateway-server.ts' : 'bare-proxy.ts', env, ['--expose-gc']);
  const origin = `http://127.0.0.1:${port}`;
  const dashscopePath = '/api/v1/services/aigc/multimodal-generation/generation';
  const url = target === 'gateway' ? `${origin}/v1/images/generations` : `${origin}${dashscopePath}`;
  const body = target === 'gateway' ? JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse at dawn' }) : NATIVE_IMAGE;
  await post(url, body); // warm: code paths loaded, not measured
  await fetch(`${origin}/__bench/rss/reset`);
  const client = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'scale-client.ts')], {
    env: { ...process.env, BENCH_URL: url, BENCH_COUNT: String(inFlight), BENCH_BODY: body },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(client);
  let fds = Number.NaN;
  const outcome = await new Promise<{ statuses: Record<string, number>; rampMs: number; totalMs: number }>((resolve, reject) => {
    let text = '';
    client.stdout.on('data', (data: Buffer) => {
      text += data.toString();
      if (text.startsWith('ramped\n') && Number.isNaN(fds)) {
        fds = 0;
        // one second into the hold: every request is in flight
        setTimeout(() => {
          fetch(`${origin}/__bench/rss/peak`)
            .then(async (answer) => (fds = ((await answer.json()) as { fds: number }).fds))
            .catch(() => {});
        }, 1000);
      }
      const last = text.trim().split('\n').at(-1)!;
      if (last.startsWith('{')) resolve(JSON.parse(last) as { statuses: Record<string, number>; rampMs: number; totalMs: number });
    });
    client.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`scale client exited with ${code}`))));
  });
  const peak = (await (await fetch(`${origin}/__bench/rss/peak`)).json()) as { growth: number; loopP99Ms: number; loopMaxMs: number };
  const held = ((await (await fetch(`http://127.0.0.1:${upstreamPort}/__bench/held`)).json()) as { peak: number }).peak;
  for (const child of children.splice(mark)) child.kill();
  return { target, inFlight, heldAtOnce: held, ...outcome, fds, rssGrowth: peak.growth, rssPerRequest: peak.growth / Math.max(1, held), loopP99Ms: peak.loopP99Ms, loopMaxMs: peak.loopMaxMs };
}

const NATIVE_IMAGE = JSON.stringify({ model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse at dawn' }] }] }, parameters: { size: '1024*1024', n: 1 } });

interface Check {
  target: string;
  goal: string;
  measured: string;
  pass: boolean;
}

async function main(): Promise<void> {
  const upstreamPort = await start('upstream-server.ts', {});
  const env = { BENCH_UPSTREAM_PORT: String(upstreamPort) };
  // the gateway as a user's host app runs it: nothing else in the process
  const [barePort, floorPort, gatewayPort] = await Promise.all([start('bare-proxy.ts', env), start('express-floor.ts', env), start('gateway-server.ts', { ...env, BENCH_PROBES: '0' })]);
  const origin = (port: number) => `http://127.0.0.1:${port}`;
  const gateway = origin(gatewayPort);

  const chatBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] });
  const chatTargets: Target[] = [
    { name: 'direct', url: `${origin(upstreamPort)}/v1/chat/completions`, body: chatBody },
    { name: 'bare', url: `${origin(barePort)}/v1/chat/completions`, body: chatBody },
    { name: 'floor', url: `${origin(floorPort)}/v1/chat/completions`, body: chatBody },
    { name: 'gateway', url: `${gateway}/v1/chat/completions`, body: chatBody },
  ];
  const dashscopePath = '/api/v1/services/aigc/multimodal-generation/generation';
  const gatewayImage = JSON.stringify({
    model: 'x-image-2.0',
    prompt: 'placeholder',
    input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse at dawn' }] }] },
    parameters: { size: '1024*1024', n: 1 },
  });
  const imageTargets: Target[] = [
    { name: 'direct', url: `${origin(upstreamPort)}${dashscopePath}`, body: NATIVE_IMAGE },
    { name: 'bare', url: `${origin(barePort)}${dashscopePath}`, body: NATIVE_IMAGE },
    { name: 'floor', url: `${origin(floorPort)}${dashscopePath}`, body: NATIVE_IMAGE },
    { name: 'gateway', url: `${gateway}/v1/images/generations`, body: gatewayImage },
  ];
  const streamBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'stream' }], stream: true });
  const streamTargets: Target[] = chatTargets.map((target) => ({ ...target, body: streamBody }));

  const results: Record<string, unknown> = { cores: os.cpus().length, node: process.version, rounds: ROUNDS, secondsPerRound: SECONDS };
  const checks: Check[] = [];
  const rows: string[] = [];
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const pct = (ratio: number) => `${(100 * ratio).toFixed(0)} %`;
  console.log(`\nmachine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}; ${ROUNDS} rounds x ${SECONDS} s, medians\n`);

  if (part('latency')) {
    for (const [route, targets] of [
      ['chat.completions (JSON passthrough)', chatTargets],
      ['images.generations (DashScope translation)', imageTargets],
    ] as const) {
      for (const connections of [1, 64]) {
        const summary = await compare(targets, connections);
        const added = { p50: summary.gateway.p50 - summary.direct.p50, p99: summary.gateway.p99 - summary.direct.p99 };
        const bareAdded = { p50: summary.bare.p50 - summary.direct.p50, p99: summary.bare.p99 - summary.direct.p99 };
        const floorAdded = { p50: summary.floor.p50 - summary.direct.p50, p99: summary.floor.p99 - summary.direct.p99 };
        const throughputVsBare = summary.gateway.rps / summary.bare.rps;
        const throughputVsFloor = summary.gateway.rps / summary.floor.rps;
        results[`${route.split(' ')[0]}@${connections}`] = { ...summary, added, bareAdded, floorAdded, throughputVsBare, throughputVsFloor };
        rows.push(
          `| ${route} | ${connections} | ${us(added.p50)} | ${us(added.p99)} | ${us(bareAdded.p50)} | ${us(floorAdded.p50)} | ${summary.gateway.rps.toFixed(0)} | ${summary.bare.rps.toFixed(0)} | ${summary.floor.rps.toFixed(0)} | ${pct(throughputVsBare)} | ${pct(throughputVsFloor)} | ${summary.gateway.cpuUs.toFixed(0)} µs | ${summary.bare.cpuUs.toFixed(0)} µs | ${summary.floor.cpuUs.toFixed(0)} µs |`,
        );
        const chat = route.startsWith('chat');
        if (connections === 1) {
          const goal = chat ? 0.3 : 0.5;
          checks.push({
            target: `${route}: added p50 over direct, 1 connection`,
            goal: `≤ ${ms(goal)}`,
            measured: `${ms(added.p50)} (bare proxy ${ms(bareAdded.p50)}, Express floor ${ms(floorAdded.p50)})`,
            pass: added.p50 <= goal,
          });
        } else {
          checks.push({ target: `${route}: req/s vs the bare proxy, 64 connections`, goal: '≥ 50 %', measured: pct(throughputVsBare), pass: throughputVsBare >= 0.5 });
          checks.push({ target: `${route}: req/s vs the Express floor, 64 connections`, goal: '≥ 100 %', measured: pct(throughputVsFloor), pass: throughputVsFloor >= 1 });
        }
      }
    }
    console.log(
      '| route | connections | added p50 | added p99 | bare proxy p50 | Express floor p50 | gateway req/s | bare req/s | floor req/s | throughput vs bare | vs floor | gateway CPU per request | bare proxy CPU per request | floor CPU per request |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  }

  if (part('stream')) {
    const figures = await ttfb(streamTargets, chatBody);
    const added = (name: 'bare' | 'floor' | 'gateway', pick: (f: StreamFigures) => number) => pick(figures[name]) - pick(figures.direct);
    // a chunk held back shows as a later arrival of some event than of the first one
    const heldBack = (name: 'bare' | 'floor' | 'gateway') => Math.max(...figures[name].events.map((at, index) => at - (figures.direct.events[index] ?? at))) - added(name, (f) => f.firstByte);
    const stream = {
      ...figures,
      firstByteOverheadMs: added('gateway', (f) => f.firstByte),
      bareFirstByteOverheadMs: added('bare', (f) => f.firstByte),
      floorFirstByteOverheadMs: added('floor', (f) => f.firstByte),
      headersOverheadMs: added('gateway', (f) => f.headers),
      bareHeadersOverheadMs: added('bare', (f) => f.headers),
      heldBackMs: heldBack('gateway'),
      bareHeldBackMs: heldBack('bare'),
      floorHeldBackMs: heldBack('floor'),
      wholeFirstByteOverheadMs: added('gateway', (f) => f.wholeFirstByte),
      bareWholeFirstByteOverheadMs: added('bare', (f) => f.wholeFirstByte),
      floorWholeFirstByteOverheadMs: added('floor', (f) => f.wholeFirstByte),
    };
    results.streamFirstByte = stream;
    console.log(
      `\nstream (20 events, one every 2 ms), added over direct: first body byte gateway ${us(stream.firstByteOverheadMs)}, bare proxy ${us(stream.bareFirstByteOverheadMs)}, Express floor ${us(stream.floorFirstByteOverheadMs)}; ` +
        `headers gateway ${us(stream.headersOverheadMs)}, bare ${us(stream.bareHeadersOverheadMs)}; worst event later than the first byte's lag: gateway ${us(stream.heldBackMs)}, bare ${us(stream.bareHeldBackMs)}; ` +
        `a whole chat answer's first body byte, same client and pacing: gateway ${us(stream.wholeFirstByteOverheadMs)}, bare ${us(stream.bareWholeFirstByteOverheadMs)}`,
    );
    checks.push({
      target: 'stream: added time to the first body byte',
      goal: '≤ 1.00 ms',
      measured: `${ms(stream.firstByteOverheadMs)} (bare proxy ${ms(stream.bareFirstByteOverheadMs)})`,
      pass: stream.firstByteOverheadMs <= 1,
    });
    checks.push({
      target: 'stream: added time to the first body byte vs the Express floor',
      goal: '≤ the floor’s + 0.20 ms',
      measured: `${ms(stream.firstByteOverheadMs)} (Express floor ${ms(stream.floorFirstByteOverheadMs)})`,
      pass: stream.firstByteOverheadMs <= stream.floorFirstByteOverheadMs + 0.2,
    });
    checks.push({
      target: 'stream: no chunk held back (worst event lag beyond the first byte’s)',
      goal: '≤ 1.00 ms',
      measured: `${ms(stream.heldBackMs)} (bare proxy ${ms(stream.bareHeldBackMs)})`,
      pass: stream.heldBackMs <= 1,
    });
  }

  if (part('scale')) {
    // inbound + outbound socket per request in the proxy process, plus its own files and a margin:
    // at the limit libuv accepts and closes connections at once (its EMFILE reserve), ECONNRESET
    const limit = fileLimit();
    const most = Math.floor((limit - 1000) / 2 / 100) * 100;
    const scale: ScaleFigures[] = [];
    console.log(`\nslow upstream (answers after 5 s), image requests held at once by one process; file limit ${limit} per process (2 sockets per request: at most ${most})`);
    console.log('| in flight | proxy | answers | held at once | ramp | all answered after | open fds | peak RSS growth | RSS per request | loop delay p99 | loop delay max |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const wanted of [1000, 5000, 10_000]) {
      const inFlight = Math.min(wanted, most);
      const pair = { bare: await holdSlow('bare', inFlight), gateway: await holdSlow('gateway', inFlight) };
      for (const figures of [pair.bare, pair.gateway]) {
        scale.push(figures);
        const answers = Object.entries(figures.statuses)
          .map(([status, count]) => `${count} x ${status}`)
          .join(', ');
        console.log(
          `| ${inFlight}${inFlight < wanted ? ` (of ${wanted})` : ''} | ${figures.target} | ${answers} | ${figures.heldAtOnce} | ${(figures.rampMs / 1000).toFixed(1)} s | ${(figures.totalMs / 1000).toFixed(1)} s | ${figures.fds} | ${(figures.rssGrowth / 2 ** 20).toFixed(0)} MB | ${(figures.rssPerRequest / 1024).toFixed(1)} KB | ${figures.loopP99Ms.toFixed(1)} ms | ${figures.loopMaxMs.toFixed(0)} ms |`,
        );
      }
      const allOk = pair.gateway.statuses['200'] === inFlight;
      const memoryRatio = pair.gateway.rssPerRequest / pair.bare.rssPerRequest;
      const label = `${inFlight.toLocaleString('en')} in flight${inFlight < wanted ? ` (${wanted.toLocaleString('en')} needs ${2 * wanted} fds, limit ${limit})` : ''}`;
      checks.push({
        target: `scale, ${label}: all answered 200, all held at once`,
        goal: `${inFlight} x 200, ${inFlight} at once`,
        measured: `${pair.gateway.statuses['200'] ?? 0} x 200, ${pair.gateway.heldAtOnce} held at once (bare proxy ${pair.bare.heldAtOnce})`,
        pass: allOk && inFlight === wanted && pair.gateway.heldAtOnce === inFlight,
      });
      checks.push({
        target: `scale, ${label}: RSS per request vs the bare proxy`,
        goal: '≤ 2 x',
        measured: `${memoryRatio.toFixed(2)} x (${(pair.gateway.rssPerRequest / 1024).toFixed(1)} KB vs ${(pair.bare.rssPerRequest / 1024).toFixed(1)} KB)`,
        pass: memoryRatio <= 2,
      });
      checks.push({
        target: `scale, ${label}: event-loop delay p99`,
        goal: '< 50 ms',
        measured: `${ms(pair.gateway.loopP99Ms)} (bare proxy ${ms(pair.bare.loopP99Ms)})`,
        pass: pair.gateway.loopP99Ms < 50,
      });
    }
    // what the default limits do with such a load (by design: one caller, 64 in flight)
    const defaults = await holdSlow('gateway', 1000, false);
    scale.push(defaults);
    console.log(
      `with the default limits (inFlightPerCaller 64, upstreamSockets 256, upstreamQueue 256), 1,000 at once from one caller: ${Object.entries(defaults.statuses)
        .map(([status, count]) => `${count} x ${status}`)
        .join(', ')}`,
    );
    results.scale = scale;
  }

  if (part('memory')) {
    const imageBytes = Number(process.env.BENCH_IMAGE_BYTES ?? 8 * 1024 * 1024);
    const b64Body = JSON.stringify({ model: 'x-image-2.0', prompt: 'x', response_format: 'b64_json' });
    const b64Growth = await rssGrowth(env, (fresh) => Promise.all(Array.from({ length: 8 }, () => post(`${fresh}/v1/images/generations`, b64Body))));
    // multipart edits: three 5 MB uploads, per upstream kind (bench/multipart-edits.ts)
    const edits = await measureMultipartEdits(children);
    const mem = {
      b64: { bytesInFlight: 8 * imageBytes, rssGrowth: b64Growth, multiple: b64Growth / (8 * imageBytes) },
      edits,
    };
    results.memory = mem;
    console.log(`\npeak RSS growth: 8 x b64_json of an 8 MB image: ${(mem.b64.rssGrowth / 2 ** 20).toFixed(0)} MB = ${mem.b64.multiple.toFixed(2)} x the image bytes`);
    printMultipartFigures(edits);
    checks.push({ target: 'memory: b64_json answers (8 x 8 MB image)', goal: '≤ 2 x the body', measured: `${mem.b64.multiple.toFixed(2)} x`, pass: mem.b64.multiple <= 2 });
    for (const figures of edits) {
      const label = `memory: multipart edit (3 x 5 MB), ${figures.kind}, ${figures.concurrent} at once, ${figures.baseline} baseline`;
      if (figures.baseline === 'collected') {
        checks.push({ target: `${label}: held`, goal: '≤ 1.5 x the uploads', measured: `${figures.heldMultiple.toFixed(2)} x`, pass: figures.heldMultiple <= 1.5 });
      } else {
        checks.push({ target: `${label}: peak RSS`, goal: '≤ 1.5 x the uploads', measured: `${figures.rssMultiple.toFixed(2)} x`, pass: figures.rssMultiple <= 1.5 });
      }
    }
    // what one hostile or large inbound body costs everyone else (fresh gateway per scenario)
    const inbound = await measureInboundBodies(upstreamPort, children);
    results.inbound = inbound;
    printInboundFigures(inbound);
    const dataUrls = inbound.find((figures) => figures.scenario.startsWith('one body of 3 x 10 MiB Data URLs (image edit)'));
    if (dataUrls) checks.push({ target: 'memory: JSON body of Data URLs (3 x 10 MiB)', goal: '≤ 2 x the body', measured: `${dataUrls.multiple.toFixed(2)} x`, pass: dataUrls.multiple <= 2 });
  }

  if (part('webhooks')) {
    // the time from the vendor finishing to the tenant's callback, polling only and with vendor webhooks
    const webhooks = await measureVendorWebhooks(process.argv.includes('--quick'));
    results.vendorWebhooks = webhooks;
    printVendorWebhookFigures(webhooks);
    checks.push({
      target: 'vendor webhooks: vendor done -> callback, p50',
      goal: '< the poll interval / 10',
      measured: `${webhooks.webhooks.p50.toFixed(1)} ms`,
      pass: webhooks.webhooks.p50 < webhooks.pollMs / 10,
    });
  }

  if (part('provenance')) {
    // the time the provenance option adds per image: reading, and signing with es256 (bench/provenance-cost.ts)
    const provenance = await measureProvenance(quick ? 10 : 40);
    results.provenance = provenance;
    printProvenanceFigures(provenance);
  }

  results.targets = checks;
  console.log('\ntargets (ratios within this run):\n');
  console.log('| target | goal | measured | |');
  console.log('|---|---|---|---|');
  for (const check of checks) console.log(`| ${check.target} | ${check.goal} | ${check.measured} | ${check.pass ? 'pass' : 'FAIL'} |`);
  console.log(`\nBENCH_RESULT ${JSON.stringify(results)}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill();
    agent.destroy();
  });
