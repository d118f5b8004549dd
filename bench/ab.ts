// A/B of two builds (measuring one change): `tsx bench/ab.ts <dirA> <dirB>` (each a copy of dist/)
// starts the upstream and one host app per build and measures both side by side, interleaved
// round by round, medians: p50 at 1 connection, req/s at 64 (chat and DashScope image), and a
// stream's first body byte. Prints B's figures as a ratio of A's: noise on a shared machine hits
// both alike.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const [dirA, dirB] = process.argv.slice(2).map((dir) => path.resolve(dir));
const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const KEY = 'sk-bench-0123456789';
const children: ChildProcess[] = [];

function start(file: string, env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve) => child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port)));
}

async function load(url: string, body: string, connections: number): Promise<{ p50: number; rps: number }> {
  const latencies: number[] = [];
  const instance = autocannon({ url, method: 'POST', connections, duration: 1.5, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
  (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, status: number, _b: number, ms: number) => status === 200 && latencies.push(ms));
  const result = await instance;
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} non-2xx`);
  latencies.sort((a, b) => a - b);
  return { p50: latencies[Math.floor(latencies.length / 2)]!, rps: latencies.length / 1.5 };
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
const [a, b] = await Promise.all([start('gateway-server.ts', { ...env, BENCH_DIST: dirA! }), start('gateway-server.ts', { ...env, BENCH_DIST: dirB! })]);
const chat = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] });
const image = JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse at dawn' });
const stream = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'stream' }], stream: true });
const figures: Record<string, { A: number[]; B: number[] }> = {};
const add = (name: string, which: 'A' | 'B', value: number) => (figures[name] ??= { A: [], B: [] })[which].push(value);
const sides = [
  ['A', a],
  ['B', b],
] as const;
for (const [, port] of sides) await load(`http://127.0.0.1:${port}/v1/chat/completions`, chat, 8); // warm-up
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [which, port] of round % 2 ? [...sides].reverse() : sides) {
    const origin = `http://127.0.0.1:${port}`;
    add('chat p50 @1 (ms)', which, (await load(`${origin}/v1/chat/completions`, chat, 1)).p50);
    add('chat req/s @64', which, (await load(`${origin}/v1/chat/completions`, chat, 64)).rps);
    add('image req/s @64', which, (await load(`${origin}/v1/images/generations`, image, 64)).rps);
    const ttfb: number[] = [];
    for (let i = 0; i < 40; i += 1) ttfb.push(await firstByte(`${origin}/v1/chat/completions`, stream));
    add('stream first body byte (ms)', which, median(ttfb));
  }
}
for (const [name, { A, B }] of Object.entries(figures)) console.log(`${name}: A ${median(A).toFixed(3)}  B ${median(B).toFixed(3)}  B/A ${(median(B) / median(A)).toFixed(3)}`);
for (const child of children) child.kill();
agent.destroy();
