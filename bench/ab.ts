// A/B of two builds (measuring one change): `tsx bench/ab.ts <dirA> <dirB>` (each a copy of dist/)
// starts the upstream, the Express floor (express-floor.ts) and one host app per build and measures
// them side by side, interleaved round by round (the order turned every round), medians: p50 at 1
// connection, req/s at 64 (chat and DashScope image), and a stream's first body byte. Prints B's
// figures as a ratio of A's (noise on a shared machine hits both alike), then each build's figures
// against the upstream alone and the floor measured in the same rounds: chat p50 added at 1
// connection, req/s at 64 connections as a share of the floor's, a stream's added first body byte.
// The Express minimum (express-minimum.ts, the least any relay mounted in Express costs) is measured
// in the same rounds: the bound under every figure a gateway in Express can reach.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuTimeUs } from './process-cpu.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const [dirA, dirB] = process.argv.slice(2).map((dir) => path.resolve(dir));
const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const KEY = 'sk-bench-0123456789';
const children: ChildProcess[] = [];
/** Port -> process id of each server: its CPU time is read from /proc. */
const pids = new Map<number, number>();

function start(file: string, env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve) =>
    child.stdout.once('data', (line: Buffer) => {
      const { port } = JSON.parse(line.toString()) as { port: number };
      pids.set(port, child.pid!);
      resolve(port);
    }),
  );
}

/** p50, req/s and the serving process's CPU time per answer (the steadiest figure on a shared machine). */
async function load(url: string, body: string, connections: number): Promise<{ p50: number; rps: number; cpuUs: number }> {
  const pid = pids.get(Number(new URL(url).port));
  const cpuBefore = cpuTimeUs(pid);
  const latencies: number[] = [];
  const instance = autocannon({ url, method: 'POST', connections, duration: 1.5, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
  (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, status: number, _b: number, ms: number) => status === 200 && latencies.push(ms));
  const result = await instance;
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} non-2xx`);
  latencies.sort((a, b) => a - b);
  return { p50: latencies[Math.floor(latencies.length / 2)]!, rps: latencies.length / 1.5, cpuUs: (cpuTimeUs(pid) - cpuBefore) / Math.max(1, latencies.length) };
}

const agent = new http.Agent({ keepAlive: true });
function firstByte(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` } }, (res) => {
      let first = 0;
      res.on('data', () => (first ||= performance.now() - started));
      res.on('end', () => resolve(first));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const upstream = await start('upstream-server.ts', {});
const env = { BENCH_UPSTREAM_PORT: String(upstream), BENCH_PROBES: '0' };
const [a, b, floor, minimum] = await Promise.all([
  start('gateway-server.ts', { ...env, BENCH_DIST: dirA! }),
  start('gateway-server.ts', { ...env, BENCH_DIST: dirB! }),
  start('express-floor.ts', env),
  start('express-minimum.ts', env),
]);
const chat = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] });
const image = JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse at dawn' });
const stream = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'stream' }], stream: true });
const figures: Record<string, { A: number[]; B: number[] }> = {};
const add = (name: string, which: 'A' | 'B', value: number) => (figures[name] ??= { A: [], B: [] })[which].push(value);
// the upstream alone and the Express floor, measured in the same rounds as the two builds
const floors: Record<string, { direct: number[]; floor: number[]; minimum: number[] }> = {};
const addFloor = (name: string, which: 'direct' | 'floor' | 'minimum', value: number) => (floors[name] ??= { direct: [], floor: [], minimum: [] })[which].push(value);
const sides = [
  ['A', a],
  ['B', b],
  ['floor', floor],
  ['minimum', minimum],
  ['direct', upstream],
] as const;
const nativeImage = JSON.stringify({ model: 'qwen-image-2.0', input: { messages: [{ role: 'user', content: [{ text: 'a lighthouse at dawn' }] }] }, parameters: { size: '1024*1024', n: 1 } });
const imageUrl = (which: string, origin: string) => `${origin}${which === 'A' || which === 'B' ? '/v1/images/generations' : '/api/v1/services/aigc/multimodal-generation/generation'}`;
for (const [, port] of sides) await load(`http://127.0.0.1:${port}/v1/chat/completions`, chat, 8); // warm-up
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [which, port] of round % 2 ? [...sides].reverse() : sides) {
    const origin = `http://127.0.0.1:${port}`;
    const put = (name: string, value: number) => (which === 'A' || which === 'B' ? add(name, which, value) : addFloor(name, which, value));
    put('chat p50 @1 (ms)', (await load(`${origin}/v1/chat/completions`, chat, 1)).p50);
    const chatLoad = await load(`${origin}/v1/chat/completions`, chat, 64);
    put('chat req/s @64', chatLoad.rps);
    put('chat CPU per request @64 (µs)', chatLoad.cpuUs);
    put('image req/s @64', (await load(imageUrl(which, origin), which === 'A' || which === 'B' ? image : nativeImage, 64)).rps);
    const ttfb: number[] = [];
    for (let i = 0; i < 40; i += 1) ttfb.push(await firstByte(`${origin}/v1/chat/completions`, stream));
    put('stream first body byte (ms)', median(ttfb));
  }
}
for (const [name, { A, B }] of Object.entries(figures)) console.log(`${name}: A ${median(A).toFixed(3)}  B ${median(B).toFixed(3)}  B/A ${(median(B) / median(A)).toFixed(3)}`);
const of = (name: string) => ({
  direct: median(floors[name]!.direct),
  floor: median(floors[name]!.floor),
  minimum: median(floors[name]!.minimum),
  A: median(figures[name]!.A),
  B: median(figures[name]!.B),
});
const p50 = of('chat p50 @1 (ms)');
const chatRps = of('chat req/s @64');
const imageRps = of('image req/s @64');
const ttfb = of('stream first body byte (ms)');
console.log(`\nadded over the upstream alone, and req/s as a share of the Express floor's (the same rounds):`);
const share = (value: number, of: number) => `${((100 * value) / of).toFixed(0)} %`;
console.log(
  `chat p50 @1 added (ms): floor ${(p50.floor - p50.direct).toFixed(3)}  minimum ${(p50.minimum - p50.direct).toFixed(3)}  A ${(p50.A - p50.direct).toFixed(3)}  B ${(p50.B - p50.direct).toFixed(3)}`,
);
console.log(
  `chat req/s @64 vs floor: minimum ${share(chatRps.minimum, chatRps.floor)}  A ${share(chatRps.A, chatRps.floor)}  B ${share(chatRps.B, chatRps.floor)}  (floor ${chatRps.floor.toFixed(0)})`,
);
console.log(`image req/s @64 vs floor: A ${share(imageRps.A, imageRps.floor)}  B ${share(imageRps.B, imageRps.floor)}  (floor ${imageRps.floor.toFixed(0)})`);
const cpu = of('chat CPU per request @64 (µs)');
console.log(`chat CPU per request @64 (µs): floor ${cpu.floor.toFixed(0)}  minimum ${cpu.minimum.toFixed(0)}  A ${cpu.A.toFixed(0)}  B ${cpu.B.toFixed(0)}`);
console.log(
  `stream first body byte added (ms): floor ${(ttfb.floor - ttfb.direct).toFixed(3)}  minimum ${(ttfb.minimum - ttfb.direct).toFixed(3)}  A ${(ttfb.A - ttfb.direct).toFixed(3)}  B ${(ttfb.B - ttfb.direct).toFixed(3)}`,
);
for (const child of children) child.kill();
agent.destroy();
