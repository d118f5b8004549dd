// Inbound bodies (docs/benchmarks.md "What one large or hostile request costs everyone else"): what one hostile or merely large request costs everyone
// else. Each scenario runs against a fresh gateway child process and reports the longest event-loop
// block (monitorEventLoopDelay in the gateway) and its RSS growth, at the peak and once settled.
// Part of `npm run bench`; alone: `tsx bench/inbound-bodies.ts` (BENCH_SOURCE=1: the source, not dist/).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const KEY = 'sk-bench-0123456789';
const MiB = 1024 * 1024;

export interface InboundFigures {
  scenario: string;
  bodyBytes: number;
  requests: number;
  statuses: Record<string, number>;
  loopMaxMs: number;
  rssPeakGrowth: number;
  rssSettledGrowth: number;
  /** Peak RSS growth over the bytes of all bodies in flight. */
  multiple: number;
}

function startChild(file: string, env: Record<string, string>, flags: string[], children: ChildProcess[]): Promise<number> {
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', path.join(here, file)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(line.toString()) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'content-length': String(body.length), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    // a gateway that dies (out of memory) or cuts the body short is a result, not a bench crash
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** `{"model":…,"messages":[…],"metadata":{"k0000000":0,…}}`: `keys` members, ~12 bytes each. */
function manyKeysBody(keys: number): Buffer {
  const parts: string[] = ['{"model":"bench-model","messages":[{"role":"user","content":"hi"}],"metadata":{'];
  for (let i = 0; i < keys; i += 1) parts.push(`${i === 0 ? '' : ','}"k${i.toString(36).padStart(7, '0')}":0`);
  parts.push('}}');
  return Buffer.from(parts.join(''));
}

/** A chat body of `count` messages of `bytes` characters each: no string long enough to be cut out. */
function midStringsBody(count: number, bytes: number): Buffer {
  const messages = Array.from({ length: count }, (_, index) => ({ role: 'user', content: `${index} `.padEnd(bytes, 'x') }));
  return Buffer.from(JSON.stringify({ model: 'bench-model', messages }));
}

/** A DashScope image edit with three Data URLs of `imageBytes` decoded bytes each. */
function dataUrlBody(imageBytes: number): Buffer {
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(imageBytes - 8, 7)]);
  const url = `data:image/png;base64,${png.toString('base64')}`;
  const content = [{ image: url }, { image: url }, { image: url }, { text: 'merge them' }];
  return Buffer.from(JSON.stringify({ model: 'x-image-edit', input: { messages: [{ role: 'user', content }] } }));
}

/** A 179-byte brotli body that inflates to ~48 MB of JSON whitespace. */
function brotliBomb(): Buffer {
  const inflated = Buffer.alloc(47 * MiB, 0x20);
  inflated.write('{"model":"bench-model","messages":[]', 0);
  inflated.write('}', inflated.length - 1);
  return zlib.brotliCompressSync(inflated, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } });
}

async function scenario(name: string, upstreamPort: number, children: ChildProcess[], send: (gateway: string) => Promise<number[]>, bodyBytes: number): Promise<InboundFigures> {
  const port = await startChild('gateway-server.ts', { BENCH_UPSTREAM_PORT: String(upstreamPort) }, ['--expose-gc'], children);
  const child = children.at(-1)!;
  const gateway = `http://127.0.0.1:${port}`;
  // warm: the first request of each kind loads its code paths (and the outbound client's, for a
  // streamed upstream body), a one-time cost of the process, not what one request costs
  await post(`${gateway}/v1/chat/completions`, Buffer.from(JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'warm' }] })));
  await post(`${gateway}/v1/images/generations`, dataUrlBody(256 * 1024));
  await fetch(`${gateway}/__bench/rss/reset`);
  const statuses = await send(gateway);
  const counts: Record<string, number> = {};
  for (const status of statuses) {
    const key = status === 0 ? 'no answer' : String(status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  let peak = { growth: Number.NaN, loopMaxMs: Number.NaN };
  let settled = { growth: Number.NaN };
  if (child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    peak = (await (await fetch(`${gateway}/__bench/rss/peak`)).json()) as typeof peak;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    settled = (await (await fetch(`${gateway}/__bench/rss/settled`)).json()) as typeof settled;
  }
  child.kill();
  return {
    scenario: name,
    bodyBytes,
    requests: statuses.length,
    statuses: counts,
    loopMaxMs: peak.loopMaxMs,
    rssPeakGrowth: peak.growth,
    rssSettledGrowth: settled.growth,
    multiple: peak.growth / (bodyBytes * statuses.length),
  };
}

export async function measureInboundBodies(upstreamPort: number, children: ChildProcess[]): Promise<InboundFigures[]> {
  const results: InboundFigures[] = [];
  const keys = manyKeysBody(3_500_000);
  results.push(await scenario('one 3.5 M-key JSON body (chat)', upstreamPort, children, async (gateway) => [await post(`${gateway}/v1/chat/completions`, keys)], keys.length));
  const images = dataUrlBody(10 * MiB);
  results.push(await scenario('one body of 3 x 10 MiB Data URLs (image edit)', upstreamPort, children, async (gateway) => [await post(`${gateway}/v1/images/generations`, images)], images.length));
  results.push(
    await scenario(
      'six bodies of 3 x 10 MiB Data URLs (image edit)',
      upstreamPort,
      children,
      (gateway) => Promise.all(Array.from({ length: 6 }, () => post(`${gateway}/v1/images/generations`, images))),
      images.length,
    ),
  );
  // json_encode (PHP) escapes every '/': the long-string path reads '\/' too
  const escaped = Buffer.from(images.toString('latin1').replaceAll('/', '\\/'), 'latin1');
  results.push(
    await scenario("one body of 3 x 10 MiB Data URLs written with '\\/' (PHP)", upstreamPort, children, async (gateway) => [await post(`${gateway}/v1/images/generations`, escaped)], escaped.length),
  );
  // strings too short to be cut out: what goes through JSON.parse is bounded by limits.jsonTextBytes
  const midStrings = midStringsBody(95_000, 490);
  results.push(
    await scenario('one 45 MB chat body of 95,000 strings of 490 B', upstreamPort, children, async (gateway) => [await post(`${gateway}/v1/chat/completions`, midStrings)], midStrings.length),
  );
  const atLimit = midStringsBody(15_000, 490);
  results.push(
    await scenario(
      'one 7.5 MB chat body of 15,000 strings of 490 B (under jsonTextBytes)',
      upstreamPort,
      children,
      async (gateway) => [await post(`${gateway}/v1/chat/completions`, atLimit)],
      atLimit.length,
    ),
  );
  const bomb = brotliBomb();
  results.push(
    await scenario(
      `20 brotli bodies of ${bomb.length} bytes (47 MiB inflated)`,
      upstreamPort,
      children,
      (gateway) => Promise.all(Array.from({ length: 20 }, () => post(`${gateway}/v1/chat/completions`, bomb, { 'content-encoding': 'br' }))),
      bomb.length,
    ),
  );
  return results;
}

export function printInboundFigures(results: readonly InboundFigures[]): void {
  const mb = (bytes: number) => (Number.isNaN(bytes) ? 'n/a (gateway died)' : `${(bytes / MiB).toFixed(0)} MB`);
  console.log('\n| inbound scenario | body | statuses | longest loop block | peak RSS growth | x bodies in flight | RSS growth settled |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    const statuses = Object.entries(r.statuses)
      .map(([status, count]) => `${count} x ${status}`)
      .join(', ');
    console.log(
      `| ${r.scenario} | ${r.bodyBytes >= MiB ? mb(r.bodyBytes) : `${r.bodyBytes} B`} | ${statuses} | ${r.loopMaxMs.toFixed(0)} ms | ${mb(r.rssPeakGrowth)} | ${r.multiple.toFixed(2)} | ${mb(r.rssSettledGrowth)} |`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const children: ChildProcess[] = [];
  startChild('upstream-server.ts', {}, [], children)
    .then(async (upstreamPort) => {
      const results = await measureInboundBodies(upstreamPort, children);
      printInboundFigures(results);
      console.log(`\nINBOUND_RESULT ${JSON.stringify(results)}`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => {
      for (const child of children) child.kill();
    });
}
