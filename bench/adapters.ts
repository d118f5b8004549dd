// Added latency of each upstream adapter (`npm run bench:adapters`): one gateway (a fresh host app, the
// source through tsx) in front of one upstream that answers every vendor's image call at once
// (adapter-upstreams.ts), both child processes. Each round sends, one at a time over a kept-alive
// socket, a text-to-image request per adapter, interleaved so the machine's noise hits all alike, and
// the same request straight to the OpenAI-compatible upstream path (the floor: one HTTP round trip).
// Prints, per adapter, p50 and p99 through the gateway and p50 minus the OpenAI-compatible adapter's.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.ADAPTER_ROUNDS ?? 400);
const WARMUP = 50;
const children: ChildProcess[] = [];

function start(file: string, env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve) => child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port)));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => (status === 200 ? resolve(performance.now() - started) : reject(new Error(`${url}: ${status}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

const upstream = await start('adapter-upstreams.ts', {});
const gateway = await start('adapter-gateway.ts', { BENCH_UPSTREAM_PORT: String(upstream) });
const { ADAPTER_MODELS, ADAPTER_KEY } = await import('./adapter-gateway.js');
const names = Object.keys(ADAPTER_MODELS);
const samples: Record<string, number[]> = { 'upstream alone': [] };
for (const name of names) samples[name] = [];

try {
  for (let round = 0; round < ROUNDS + WARMUP; round += 1) {
    const direct = await post(`http://127.0.0.1:${upstream}/v1/images/generations`, JSON.stringify({ model: 'gpt-image-1', prompt: 'a lighthouse at dawn' }), {});
    if (round >= WARMUP) samples['upstream alone']!.push(direct);
    for (const name of names) {
      const body = JSON.stringify({ model: name, prompt: 'a lighthouse at dawn', size: '1024x1024' });
      const took = await post(`http://127.0.0.1:${gateway}/v1/images/generations`, body, { authorization: `Bearer ${ADAPTER_KEY}` });
      if (round >= WARMUP) samples[name]!.push(took);
    }
  }
  const base = quantile(samples['openai-compatible']!, 0.5);
  const rows = Object.entries(samples).map(([name, values]) => {
    const p50 = quantile(values, 0.5);
    const added = name === 'upstream alone' ? '' : `${p50 - base >= 0 ? '+' : ''}${(p50 - base).toFixed(2)}`;
    return `| ${name} | ${name === 'upstream alone' ? '' : ADAPTER_MODELS[name as keyof typeof ADAPTER_MODELS]} | ${p50.toFixed(2)} | ${quantile(values, 0.99).toFixed(2)} | ${added} |`;
  });
  console.log(`Sequential text-to-image requests, ${ROUNDS} per adapter (after ${WARMUP} warm-up rounds), interleaved; milliseconds.\n`);
  console.log('| adapter | what the gateway does | p50 | p99 | p50 vs OpenAI-compatible |\n|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  for (const child of children) child.kill();
  agent.destroy();
}
