// `npm run bench:streams`: streamed image answers held at scale (docs/benchmarks.md "Image streams").
// BENCH_STREAMS (default 2,000) image requests with `stream: true` sent at once to one gateway process,
// in front of a DashScope-shaped upstream that answers after BENCH_WAIT_MS (default 60 s): the gateway
// holds every stream, writing a `: keep-alive` comment every 15 s (limits.streamKeepAliveMs), then one
// completed event each. The same count of ordinary (JSON) requests runs after, as the baseline a held
// request costs without a stream. A fresh upstream, gateway and load client per row; figures from the
// gateway's probes (probes.ts): peak RSS growth over the hold, per request held, event-loop delay.
// Prints a table and one JSON line (`BENCH_STREAMS {...}`). Runs the built package (npm run build).
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const COUNT = Number(process.env.BENCH_STREAMS ?? 2_000);
const WAIT_MS = Number(process.env.BENCH_WAIT_MS ?? 60_000);
const children: ChildProcess[] = [];

async function start(file: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<number> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

interface Row {
  kind: 'stream' | 'json';
  sent: number;
  statuses: Record<string, number>;
  heldAtOnce: number;
  completed?: number;
  keepAlives?: number[];
  longestQuietMs?: number;
  rampMs: number;
  totalMs: number;
  rssGrowth: number;
  rssPerRequest: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

async function hold(kind: Row['kind']): Promise<Row> {
  const mark = children.length;
  const upstreamPort = await start('upstream-server.ts', { BENCH_DELAY_MS: String(WAIT_MS), BENCH_IMAGE_BYTES: '1024', BENCH_BACKLOG: '4096' });
  const port = await start('gateway-server.ts', { BENCH_UPSTREAM_PORT: String(upstreamPort), BENCH_PROBES: '1', BENCH_BACKLOG: '4096', BENCH_SCALE: String(COUNT + 1) }, ['--expose-gc']);
  const origin = `http://127.0.0.1:${port}`;
  const url = `${origin}/v1/images/generations`;
  const body = JSON.stringify({ model: 'x-image-2.0', prompt: 'a lighthouse at dawn', ...(kind === 'stream' ? { stream: true } : { response_format: 'b64_json' }) });
  // warm: one request of the same kind loads the code paths; it waits WAIT_MS like the others, so it is
  // left running (one more held request) and the probes reset once it reached the upstream
  const warm = fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-0123456789' }, body }).then(
    (answer) => answer.arrayBuffer(),
    () => undefined,
  );
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await fetch(`${origin}/__bench/rss/reset`);
  const client = spawn(process.execPath, ['--import', 'tsx', path.join(here, kind === 'stream' ? 'stream-client.ts' : 'scale-client.ts')], {
    env: { ...process.env, BENCH_URL: url, BENCH_COUNT: String(COUNT), BENCH_BODY: body },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(client);
  const outcome = await new Promise<Omit<Row, 'kind' | 'sent' | 'heldAtOnce' | 'rssGrowth' | 'rssPerRequest' | 'loopP99Ms' | 'loopMaxMs'>>((resolve, reject) => {
    let text = '';
    client.stdout.on('data', (data: Buffer) => {
      text += data.toString();
      const last = text.trim().split('\n').at(-1)!;
      if (last.startsWith('{')) resolve(JSON.parse(last) as Row);
    });
    client.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load client exited with ${code}`))));
  });
  const peak = (await (await fetch(`${origin}/__bench/rss/peak`)).json()) as { growth: number; loopP99Ms: number; loopMaxMs: number };
  await warm;
  const held = ((await (await fetch(`http://127.0.0.1:${upstreamPort}/__bench/held`)).json()) as { peak: number }).peak;
  for (const child of children.splice(mark)) child.kill();
  return { kind, sent: COUNT, heldAtOnce: held, ...outcome, rssGrowth: peak.growth, rssPerRequest: peak.growth / Math.max(1, held), loopP99Ms: peak.loopP99Ms, loopMaxMs: peak.loopMaxMs };
}

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  // the warm-up request is one more in flight: the per-caller cap is raised to COUNT + 1
  const rows = [await hold('stream'), await hold('json')];
  console.log(`\n${COUNT} image requests held ${s(WAIT_MS)} by one gateway process (upstream answers after ${s(WAIT_MS)})\n`);
  console.log(
    '| requests | answers | held at once | completed events | keep-alives per stream (min/median/max) | longest quiet | all answered after | peak RSS growth | RSS per request held | loop delay p99 / max |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const answers = Object.entries(row.statuses)
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ');
    console.log(
      `| ${row.kind === 'stream' ? 'stream: true' : 'JSON (b64_json)'} | ${answers} | ${row.heldAtOnce} | ${row.completed ?? '-'} | ${row.keepAlives?.join(' / ') ?? '-'} | ${row.longestQuietMs !== undefined ? s(row.longestQuietMs) : '-'} | ${s(row.totalMs)} | ${mb(row.rssGrowth)} | ${kb(row.rssPerRequest)} | ${row.loopP99Ms.toFixed(1)} / ${row.loopMaxMs.toFixed(1)} ms |`,
    );
  }
  console.log(`BENCH_STREAMS ${JSON.stringify(rows)}`);
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill();
  });
