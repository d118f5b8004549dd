// `npm run bench`: the fake upstream, a bare Node reverse proxy (the floor) and a host Express app
// with the gateway, each in its own process on loopback, measured side by side with autocannon,
// interleaved round by round; medians of the rounds. Prints a table and one JSON line
// (`BENCH_RESULT {...}`). `--quick` runs fewer, shorter rounds.
//
// Latency percentiles come from autocannon's per-response timings (its own histogram keeps whole
// milliseconds, too coarse for sub-millisecond overhead).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { measureInboundBodies, printInboundFigures } from './inbound-bodies.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const SECONDS = quick ? 1 : 2;
const KEY = 'sk-bench-0123456789';
const children: ChildProcess[] = [];

async function start(file: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<number> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

interface Target {
  name: 'direct' | 'bare' | 'gateway';
  url: string;
  body: string;
}

interface Sample {
  p50: number;
  p99: number;
  rps: number;
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
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), rps: latencies.length / SECONDS };
}

/** Rounds of direct, bare, gateway in turn; medians per target. */
async function compare(targets: Target[], connections: number): Promise<Record<Target['name'], Sample>> {
  const rounds: Record<string, Sample[]> = {};
  for (const target of targets) await load(target, connections); // warm-up, not counted
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const target of targets) (rounds[target.name] ??= []).push(await load(target, connections));
  }
  const summary = {} as Record<Target['name'], Sample>;
  for (const target of targets) {
    const samples = rounds[target.name]!;
    summary[target.name] = { p50: median(samples.map((s) => s.p50)), p99: median(samples.map((s) => s.p99)), rps: median(samples.map((s) => s.rps)) };
  }
  return summary;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; firstByteMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = 0;
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers } }, (res) => {
      res.once('data', () => (firstByteMs = performance.now() - started));
      res.on('data', () => {});
      res.on('end', () => resolve({ status: res.statusCode ?? 0, firstByteMs, totalMs: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function ttfb(targets: Target[]): Promise<Record<Target['name'], number>> {
  const samples: Record<string, number[]> = {};
  const runs = quick ? 60 : 200;
  for (let i = 0; i < runs + 20; i += 1) {
    for (const target of targets) {
      const result = await post(target.url, target.body);
      if (result.status !== 200) throw new Error(`stream ${target.name}: HTTP ${result.status}`);
      if (i >= 20) (samples[target.name] ??= []).push(result.firstByteMs);
    }
  }
  return Object.fromEntries(targets.map((target) => [target.name, median(samples[target.name]!)])) as Record<Target['name'], number>;
}

/**
 * Peak RSS growth of a burst, each run in a fresh gateway process: memory a process freed earlier
 * stays in its RSS and would hide the growth of the next burst.
 */
async function rssGrowth(env: Record<string, string>, burst: (gateway: string) => Promise<unknown>): Promise<number> {
  const growths: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const port = await start('gateway-server.ts', env, ['--expose-gc']);
    const child = children.at(-1)!;
    const gateway = `http://127.0.0.1:${port}`;
    // warm: the first request loads code paths, which is not what is measured
    await post(`${gateway}/v1/images/generations`, JSON.stringify({ model: 'x-image-2.0', prompt: 'warm' }));
    await fetch(`${gateway}/__bench/rss/reset`);
    await burst(gateway);
    await new Promise((resolve) => setTimeout(resolve, 20));
    growths.push(((await (await fetch(`${gateway}/__bench/rss/peak`)).json()) as { growth: number }).growth);
    child.kill();
  }
  return median(growths);
}

function multipartEdit(files: Buffer[]): { body: Buffer; contentType: string } {
  const boundary = `----bench${Date.now()}`;
  const parts: Buffer[] = [];
  const field = (name: string, value: string) => parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  field('model', 'x-image-edit');
  field('prompt', 'merge the three images');
  files.forEach((file, index) => {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image[]"; filename="${index}.png"\r\nContent-Type: image/png\r\n\r\n`), file, Buffer.from('\r\n'));
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function main(): Promise<void> {
  const upstreamPort = await start('upstream-server.ts', {});
  const env = { BENCH_UPSTREAM_PORT: String(upstreamPort) };
  const [barePort, gatewayPort] = await Promise.all([start('bare-proxy.ts', env), start('gateway-server.ts', env, ['--expose-gc'])]);
  const origin = (port: number) => `http://127.0.0.1:${port}`;
  const gateway = origin(gatewayPort);

  const chatBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] });
  const chatTargets: Target[] = [
    { name: 'direct', url: `${origin(upstreamPort)}/v1/chat/completions`, body: chatBody },
    { name: 'bare', url: `${origin(barePort)}/v1/chat/completions`, body: chatBody },
    { name: 'gateway', url: `${gateway}/v1/chat/completions`, body: chatBody },
  ];
  const dashscopePath = '/api/v1/services/aigc/multimodal-generation/generation';
  const nativeImage = JSON.stringify({ model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse at dawn' }] }] }, parameters: { size: '1024*1024', n: 1 } });
  const gatewayImage = JSON.stringify({
    model: 'x-image-2.0',
    prompt: 'placeholder',
    input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse at dawn' }] }] },
    parameters: { size: '1024*1024', n: 1 },
  });
  const imageTargets: Target[] = [
    { name: 'direct', url: `${origin(upstreamPort)}${dashscopePath}`, body: nativeImage },
    { name: 'bare', url: `${origin(barePort)}${dashscopePath}`, body: nativeImage },
    { name: 'gateway', url: `${gateway}/v1/images/generations`, body: gatewayImage },
  ];
  const streamBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'stream' }], stream: true });
  const streamTargets: Target[] = chatTargets.map((target) => ({ ...target, body: streamBody }));

  const results: Record<string, unknown> = { cores: os.cpus().length, node: process.version, rounds: ROUNDS, secondsPerRound: SECONDS };
  const rows: string[] = [];
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  for (const [route, targets] of [
    ['chat.completions (JSON passthrough)', chatTargets],
    ['images.generations (DashScope translation)', imageTargets],
  ] as const) {
    for (const connections of [1, 64]) {
      const summary = await compare(targets, connections);
      const added = { p50: summary.gateway.p50 - summary.direct.p50, p99: summary.gateway.p99 - summary.direct.p99 };
      const bareAdded = { p50: summary.bare.p50 - summary.direct.p50, p99: summary.bare.p99 - summary.direct.p99 };
      results[`${route.split(' ')[0]}@${connections}`] = { ...summary, added, bareAdded, throughputVsBare: summary.gateway.rps / summary.bare.rps };
      rows.push(
        `| ${route} | ${connections} | ${us(added.p50)} | ${us(added.p99)} | ${us(bareAdded.p50)} | ${summary.gateway.rps.toFixed(0)} | ${summary.bare.rps.toFixed(0)} | ${((100 * summary.gateway.rps) / summary.bare.rps).toFixed(0)} % |`,
      );
    }
  }

  const firstByte = await ttfb(streamTargets);
  results.streamFirstByte = { ...firstByte, overheadMs: firstByte.gateway - firstByte.direct, bareOverheadMs: firstByte.bare - firstByte.direct };

  const imageBytes = Number(process.env.BENCH_IMAGE_BYTES ?? 8 * 1024 * 1024);
  const b64Body = JSON.stringify({ model: 'x-image-2.0', prompt: 'x', response_format: 'b64_json' });
  const b64Growth = await rssGrowth(env, (fresh) => Promise.all(Array.from({ length: 8 }, () => post(`${fresh}/v1/images/generations`, b64Body))));
  const fiveMb = () => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(5 * 1024 * 1024 - 8, 1)]);
  const edit = multipartEdit([fiveMb(), fiveMb(), fiveMb()]);
  const editGrowth = await rssGrowth(env, async (fresh) => {
    const result = await post(`${fresh}/v1/images/edits`, edit.body, { 'content-type': edit.contentType });
    if (result.status !== 200) throw new Error(`edit: HTTP ${result.status}`);
  });
  results.memory = {
    b64: { bytesInFlight: 8 * imageBytes, rssGrowth: b64Growth, multiple: b64Growth / (8 * imageBytes) },
    edit: { bytesInFlight: 3 * 5 * 1024 * 1024, rssGrowth: editGrowth, multiple: editGrowth / (15 * 1024 * 1024) },
  };

  const mem = results.memory as { b64: { multiple: number; rssGrowth: number }; edit: { multiple: number; rssGrowth: number } };
  const stream = results.streamFirstByte as { overheadMs: number; bareOverheadMs: number };
  console.log(`\nmachine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}; ${ROUNDS} rounds x ${SECONDS} s, medians\n`);
  console.log('| route | connections | added p50 | added p99 | bare proxy p50 | gateway req/s | bare req/s | throughput vs bare |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`\nstream first byte over direct (20 chunks): gateway ${us(stream.overheadMs)}, bare proxy ${us(stream.bareOverheadMs)}`);
  console.log(`peak RSS growth: 8 x b64_json of an 8 MB image: ${(mem.b64.rssGrowth / 2 ** 20).toFixed(0)} MB = ${mem.b64.multiple.toFixed(2)} x the image bytes`);
  console.log(`peak RSS growth: multipart edit, three 5 MB images: ${(mem.edit.rssGrowth / 2 ** 20).toFixed(0)} MB = ${mem.edit.multiple.toFixed(2)} x the image bytes`);
  // issue 9: what one hostile or large inbound body costs everyone else (fresh gateway per scenario)
  const inbound = await measureInboundBodies(upstreamPort, children);
  results.inbound = inbound;
  printInboundFigures(inbound);
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
