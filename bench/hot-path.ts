// The hot path's cost per request, figures that hold on a loaded machine: `tsx bench/hot-path.ts
// <dist> [<dist> ...]` (each a copy of dist/) starts the upstream, the Express floor and one host app
// per build, then sends each the same fixed number of chat requests (8 connections) and of streams,
// interleaved round by round, and prints per build the CPU time (user + system, /proc) and the bytes
// allocated (V8's `--trace-gc-nvp` `allocated=` counts, summed) per request, medians of the rounds.
// Wall-clock figures are bench/ab.ts's; see docs/benchmarks.md.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuTimeUs } from './process-cpu.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dirs = process.argv.slice(2).map((dir) => path.resolve(dir));
const ROUNDS = Number(process.env.HOT_ROUNDS ?? 3);
const CHATS = Number(process.env.HOT_CHATS ?? 10_000);
const STREAMS = Number(process.env.HOT_STREAMS ?? 1_000);
const KEY = 'sk-bench-0123456789';
const children: ChildProcess[] = [];

interface Server {
  name: string;
  port: number;
  pid: number;
  /** Bytes V8 reported allocated so far (the sum of every collection's `allocated=`). */
  allocated: () => number;
  /** Main-thread collection pauses so far, ms, and bytes that survived a scavenge. */
  gc: () => { pauseMs: number; survived: number };
}

function start(name: string, file: string, env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let allocated = 0;
  let pauseMs = 0;
  let survived = 0;
  let rest = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      const lines = (rest + data.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const bytes = / allocated=(\d+)/.exec(line);
        if (bytes) {
          allocated += Number(bytes[1]);
          pauseMs += Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? 0);
          survived += Number(/ new_space_survived=(\d+)/.exec(line)?.[1] ?? 0) + Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
        } else if (line.startsWith('{"port"')) resolve({ name, port: (JSON.parse(line) as { port: number }).port, pid: child.pid!, allocated: () => allocated, gc: () => ({ pauseMs, survived }) });
      }
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

interface Figures {
  cpuUs: number;
  kb: number;
  /** Collection pauses, µs, and bytes that survived a scavenge (the collector's work grows with them). */
  gcUs: number;
  survivedB: number;
}

/** CPU µs, allocated KB and the collector's work per answer over `amount` requests. */
async function measure(server: Server, body: string, amount: number, connections: number): Promise<Figures> {
  const cpuBefore = cpuTimeUs(server.pid);
  const allocatedBefore = server.allocated();
  const gcBefore = server.gc();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/v1/chat/completions`,
    method: 'POST',
    connections,
    amount,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  // the collections' reports reach this process a little after the load ends
  await new Promise((resolve) => setTimeout(resolve, 200));
  const gc = server.gc();
  return {
    cpuUs: (cpuTimeUs(server.pid) - cpuBefore) / amount,
    kb: (server.allocated() - allocatedBefore) / amount / 1024,
    gcUs: ((gc.pauseMs - gcBefore.pauseMs) * 1000) / amount,
    survivedB: (gc.survived - gcBefore.survived) / amount,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const upstream = await start('upstream', 'upstream-server.ts', {});
const env = { BENCH_UPSTREAM_PORT: String(upstream.port), BENCH_PROBES: '0' };
const servers = await Promise.all([start('floor', 'express-floor.ts', env), ...dirs.map((dir, i) => start(`${i}: ${path.basename(dir)}`, 'gateway-server.ts', { ...env, BENCH_DIST: dir }))]);
const chat = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }] });
const stream = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'stream' }], stream: true });
for (const server of servers) {
  await measure(server, chat, CHATS / 2, 8); // warm-up
  await measure(server, stream, STREAMS / 4, 32);
}
const kinds = ['chat', 'stream'] as const;
const rows = new Map(servers.map((server) => [server, { chat: [] as Figures[], stream: [] as Figures[] }]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const server of round % 2 ? [...servers].reverse() : servers) {
    const row = rows.get(server)!;
    row.chat.push(await measure(server, chat, CHATS, 8));
    row.stream.push(await measure(server, stream, STREAMS, 32));
  }
}
console.log(`per request, medians of ${ROUNDS} rounds (${CHATS} chats at 8 connections, ${STREAMS} streams of 20 events at 32):`);
for (const [server, row] of rows) {
  for (const kind of kinds) {
    const of = (field: keyof Figures, digits: number) => `${median(row[kind].map((f) => f[field])).toFixed(digits)} [${row[kind].map((f) => f[field].toFixed(digits)).join(' ')}]`;
    console.log(`${server.name} ${kind}: CPU ${of('cpuUs', 0)} µs, allocated ${of('kb', 1)} KB, GC pauses ${of('gcUs', 1)} µs, survived ${of('survivedB', 0)} B`);
  }
}
for (const child of children) child.kill();
