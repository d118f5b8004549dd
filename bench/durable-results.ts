// `npm run bench:storage` (or `npx tsx bench/durable-results.ts`): memory of durable results (docs/benchmarks.md "Durable results").
// Each scenario runs in a fresh child process (so one scenario's freed heap does not hide the next
// one's growth): a host Express app with the gateway and the embedded store, a fake upstream that
// generates its result bytes on the fly (nothing held), and the request that re-hosts one result.
// Reports the peak RSS growth over the idle baseline against the bytes in flight; the
// target is growth under 1.5 x the bytes. Prints a table and one `BENCH_STORAGE {...}` JSON line.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import express from 'express';
import { createGatewayRouter, staticKeys } from '../lib/index.js';
import { localResultStorage } from '../lib/storage.js';

const MIB = 1024 * 1024;
const KEY = 'sk-bench-storage-0123456789';
const SCENARIOS = {
  // the control: what one re-hosting request costs whatever its size (V8's young generation, sockets, streams)
  'image 64 KiB, url (control)': { bytes: 64 * 1024, kind: 'image', format: 'url' },
  'image 8 MB, url': { bytes: 8 * MIB, kind: 'image', format: 'url' },
  // a larger image: the growth is a plateau of freed chunks V8 has not collected yet, not a copy per byte
  'image 32 MB, url': { bytes: 32 * MIB, kind: 'image', format: 'url' },
  'image 8 MB, b64_json': { bytes: 8 * MIB, kind: 'image', format: 'b64_json' },
  // the same request without storage: what b64_json costs without storage (download, encode, send)
  'image 8 MB, b64_json, no storage': { bytes: 8 * MIB, kind: 'image', format: 'b64_json', noStorage: true },
  'video 50 MB, task query': { bytes: 50 * MIB, kind: 'video', format: 'url' },
} as const;
type Name = keyof typeof SCENARIOS;

const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const MP4_HEAD = Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0]);

/** Writes `size` bytes starting with `head`, in 64 KiB chunks, honouring backpressure. */
async function writeGenerated(res: http.ServerResponse, head: Buffer, size: number): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 7);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
  let sent = 0;
  while (sent < size) {
    const piece = sent === 0 ? Buffer.concat([head, chunk.subarray(head.length)]) : chunk;
    const part = piece.subarray(0, Math.min(piece.length, size - sent));
    sent += part.length;
    if (!res.write(part)) await new Promise((resolve) => res.once('drain', resolve));
  }
  res.end();
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function runScenario(name: Name): Promise<void> {
  const scenario = SCENARIOS[name];
  const gc = (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc')) as () => void;
  let origin = '';
  // DashScope (upstreams §1.3) for images, Ark (upstreams §2.3) for the video task, and the result host
  const upstream = http.createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/results/')) return void writeGenerated(res, scenario.kind === 'image' ? PNG_HEAD : MP4_HEAD, scenario.bytes);
    req.resume();
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.includes('multimodal-generation')) {
      return json({
        output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `${origin}/results/image.png` }] } }] },
        usage: { image_count: 1 },
        request_id: 'r',
      });
    }
    if (req.method === 'POST') return json({ id: 'cgt-bench-1' });
    return json({ id: 'cgt-bench-1', model: 'seedance', status: 'succeeded', content: { video_url: `${origin}/results/video.mp4` }, created_at: 1, updated_at: 2 });
  });
  origin = await listen(upstream);
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-storage-'));
  const router = createGatewayRouter({
    verifyKey: staticKeys({ [KEY]: { id: 'bench' } }),
    resolveUpstream: ({ model }) => (model === 'seedance' ? { provider: 'ark', baseURL: `${origin}/api/v3`, apiKey: 'k' } : { provider: 'dashscope', baseURL: `${origin}/api/v1`, apiKey: 'k' }),
    allow: { privateResultUrls: true },
    limits: { downloadBytes: 64 * MIB },
    ...('noStorage' in scenario ? {} : { storage: localResultStorage({ directory, secret: 'bench-secret-bench-secret-bench-secret' }) }),
  });
  const app = express().use(router);
  const gateway = http.createServer(app);
  const base = await listen(gateway);
  const call = async (method: string, route: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // the answer is read and dropped chunk by chunk: the client holds no copy either
    if (scenario.format !== 'b64_json') return JSON.parse(await response.text()) as Record<string, unknown>;
    let length = 0;
    for await (const chunk of response.body!) length += (chunk as Uint8Array).length;
    return { length };
  };
  // one small warm-up request loads every module and pool, so the baseline is the idle server
  await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  if (scenario.kind === 'image') {
    await call('POST', '/v1/images/generations', { model: 'x-image-2.0', prompt: 'bench', response_format: scenario.format });
  } else {
    const created = await call('POST', '/api/v3/contents/generations/tasks', { model: 'seedance', content: [{ type: 'text', text: 'bench' }] });
    const task = await call('GET', `/api/v3/contents/generations/tasks/${String(created.id)}`);
    if (!String((task.content as { video_url?: string }).video_url).includes('/v1/results/')) throw new Error('the video was not re-hosted');
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const stored = (await fs.readdir(directory, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).length;
  await router.close();
  gateway.close();
  upstream.close();
  await fs.rm(directory, { recursive: true, force: true });
  if (stored !== ('noStorage' in scenario ? 0 : 1)) throw new Error(`expected one stored file, found ${stored}`);
  process.stdout.write(`${JSON.stringify({ name, bytes: scenario.bytes, growth: peak - baseline, ms: Math.round(ms) })}\n`);
}

async function main(): Promise<void> {
  const scenario = process.argv[2];
  if (scenario) return runScenario(scenario as Name);
  const file = fileURLToPath(import.meta.url);
  const results: Array<{ name: string; bytes: number; growth: number; ms: number }> = [];
  for (const name of Object.keys(SCENARIOS)) {
    // the machine is shared and RSS is noisy: the median of three fresh processes
    const runs: Array<(typeof results)[number]> = [];
    for (let round = 0; round < 3; round += 1) {
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', file, name], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`${name} exited with ${code}`))));
      });
      runs.push(JSON.parse(output.trim().split('\n').at(-1)!) as (typeof results)[number]);
    }
    results.push(runs.sort((a, b) => a.growth - b.growth)[1]!);
  }
  console.log('\nDurable results: peak RSS growth while re-hosting one result, median of 3 processes (target < 1.5 x bytes in flight)\n');
  console.log('| scenario | bytes in flight | RSS growth | growth / bytes | time |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const r of results) console.log(`| ${r.name} | ${(r.bytes / MIB).toFixed(2)} MiB | ${(r.growth / MIB).toFixed(1)} MiB | ${(r.growth / r.bytes).toFixed(2)} | ${r.ms} ms |`);
  console.log(`\nBENCH_STORAGE ${JSON.stringify(results.map((r) => ({ ...r, ratio: Number((r.growth / r.bytes).toFixed(3)) })))}`);
}

await main();
