// Multipart edits (docs/benchmarks.md "Multipart edits"): the memory an image edit with three 5 MB
// uploads holds, for each way its files leave the gateway: the form re-sent to an OpenAI-compatible
// upstream, and the files encoded as Data URLs into DashScope's JSON. N edits at once are held by a
// slow upstream (this process: its memory is not measured) until it has read every body; the gateway
// (a fresh child process per run) reports its peak RSS growth over the whole exchange and, while the
// answers are held, its heap + off-heap growth after a forced collection (what is still referenced).
// Both divided by N x 15 MiB, with two baselines: right after a forced collection, and in a process
// that served one such edit just before. Part of `npm run bench -- --only=memory`; alone:
// `npx tsx bench/multipart-edits.ts` (BENCH_SOURCE=1: the source, not dist/; BENCH_RUNS, BENCH_EDITS=1,4;
// BENCH_GATEWAY_SERVER: another copy of gateway-server.ts, e.g. one importing an older lib/ under
// bench/.tmp/, to compare two versions; BENCH_GATEWAY_FLAGS: node flags for the gateway, e.g. --trace-gc).
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const KEY = 'sk-bench-0123456789';
const MiB = 1024 * 1024;
const UPLOAD = 5 * MiB;

export type UpstreamKind = 'openai multipart' | 'dashscope Data URL';

export interface MultipartFigures {
  kind: UpstreamKind;
  /**
   * `collected`: the baseline taken right after a forced collection, which releases the heap's free
   * pages: the edit's growth includes touching them again, a one-time cost of the process.
   * `steady`: an edit of the same size served first, no forced collection: the process as it is
   * after serving such edits (held is then not measured: the baseline holds that edit's garbage).
   */
  baseline: 'collected' | 'steady';
  concurrent: number;
  uploadBytes: number;
  /** Peak RSS growth over the whole exchange (median of the runs). */
  rssPeakGrowth: number;
  /** Heap + off-heap growth after a collection while the answers are held (median of the runs). */
  heldGrowth: number;
  rssMultiple: number;
  heldMultiple: number;
  /** Bytes the upstream read per request. */
  upstreamBodyBytes: number;
}

const MODELS: Record<UpstreamKind, string> = {
  // gateway-server.ts routes x-image-* to DashScope (a generic image family) and others to the OpenAI-compatible upstream
  'openai multipart': 'gpt-image-1',
  'dashscope Data URL': 'x-image-edit',
};

/** A PNG signature then noise (noise: nothing in the path may get away with compressible bytes). */
function upload(seed: number, bytes = UPLOAD): Buffer {
  const noise = Buffer.alloc(bytes);
  for (let offset = 8; offset < bytes; offset += 32) createHash('sha256').update(`${seed}:${offset}`).digest().copy(noise, offset);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(noise, 0);
  return noise;
}

function multipartEdit(model: string, files: Buffer[]): { body: Buffer; contentType: string } {
  const boundary = `----bench${Date.now()}`;
  const parts: Buffer[] = [];
  const field = (name: string, value: string) => parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  field('model', model);
  field('prompt', 'merge the three images');
  files.forEach((file, index) => {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image[]"; filename="${index}.png"\r\nContent-Type: image/png\r\n\r\n`), file, Buffer.from('\r\n'));
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The slow upstream: reads each body to its end (counting, not keeping it), then holds the answer until released. */
class SlowUpstream {
  private readonly server: http.Server;
  private held: Array<() => void> = [];
  private waiting?: { count: number; resolve: () => void };
  lastBodyBytes = 0;
  port = 0;
  holding = false;

  constructor() {
    this.server = http.createServer((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => (bytes += chunk.length));
      req.on('end', () => {
        if (req.url === '/image.png') {
          const png = upload(0, 1024);
          res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
          res.end(png);
          return;
        }
        this.lastBodyBytes = bytes;
        const image = `http://127.0.0.1:${this.port}/image.png`;
        const body = req.url?.endsWith('/images/edits')
          ? JSON.stringify({ created: 1720000000, data: [{ url: image }] })
          : JSON.stringify({
              output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: [{ image }] } }] },
              usage: { width: 1024, height: 1024, image_count: 1 },
              request_id: 'bench',
            });
        const answer = (): void => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        };
        if (!this.holding) return answer();
        this.held.push(answer);
        if (this.waiting && this.held.length >= this.waiting.count) this.waiting.resolve();
      });
    });
    this.server.keepAliveTimeout = 60_000;
  }

  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.port = (this.server.address() as AddressInfo).port))));
  }

  /** Resolves once `count` bodies were read to their end and their answers are held. */
  hold(count: number): Promise<void> {
    this.holding = true;
    return new Promise((resolve) => (this.waiting = { count, resolve }));
  }

  release(): void {
    this.holding = false;
    this.waiting = undefined;
    for (const answer of this.held.splice(0)) answer();
  }

  close(): void {
    this.server.close();
  }
}

function post(url: string, body: Buffer, contentType: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': contentType, authorization: `Bearer ${KEY}`, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function startGateway(upstreamPort: number, children: ChildProcess[]): Promise<{ port: number; child: ChildProcess }> {
  const flags = (process.env.BENCH_GATEWAY_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, ['--expose-gc', ...flags, '--import', 'tsx', process.env.BENCH_GATEWAY_SERVER ?? path.join(here, 'gateway-server.ts')], {
    env: { ...process.env, BENCH_UPSTREAM_PORT: String(upstreamPort) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (data: Buffer) => {
      text += data.toString();
      let end: number;
      while ((end = text.indexOf('\n')) >= 0) {
        const line = text.slice(0, end);
        text = text.slice(end + 1);
        if (line.startsWith('{"port"')) resolve({ port: (JSON.parse(line) as { port: number }).port, child });
        else if (process.env.BENCH_VERBOSE) console.log(`gateway: ${line}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`gateway-server.ts exited with ${code}`)));
  });
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(kind: UpstreamKind, concurrent: number, runs: number, upstream: SlowUpstream, children: ChildProcess[], steady: boolean): Promise<MultipartFigures> {
  const model = MODELS[kind];
  const edit = multipartEdit(model, [upload(1), upload(2), upload(3)]);
  const small = multipartEdit(model, [upload(4, 256 * 1024)]);
  const peaks: number[] = [];
  const helds: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const { port, child } = await startGateway(upstream.port, children);
    const gateway = `http://127.0.0.1:${port}`;
    // warm: a small edit of the same kind loads its code paths (a one-time cost, not what is measured)
    for (let i = 0; i < 2; i += 1) {
      const status = await post(`${gateway}/v1/images/edits`, small.body, small.contentType);
      if (status !== 200) throw new Error(`${kind}: warm edit HTTP ${status}`);
    }
    if (steady) {
      // an edit of the measured size first: the process as it is after serving such edits
      const status = await post(`${gateway}/v1/images/edits`, edit.body, edit.contentType);
      if (status !== 200) throw new Error(`${kind}: warm edit HTTP ${status}`);
    }
    await fetch(`${gateway}/__bench/rss/reset${steady ? '?gc=0' : ''}`);
    const allRead = upstream.hold(concurrent);
    const answers = Promise.all(Array.from({ length: concurrent }, () => post(`${gateway}/v1/images/edits`, edit.body, edit.contentType)));
    await allRead;
    const held = (await (await fetch(`${gateway}/__bench/rss/held`)).json()) as { heapUsed: number; external: number };
    upstream.release();
    const statuses = await answers;
    if (statuses.some((status) => status !== 200)) throw new Error(`${kind}: edits answered ${statuses.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const peak = (await (await fetch(`${gateway}/__bench/rss/peak`)).json()) as { growth: number; heapTotalGrowth: number; externalGrowth: number };
    if (process.env.BENCH_VERBOSE) console.log(kind, concurrent, JSON.stringify({ peak, held }));
    peaks.push(peak.growth);
    helds.push(held.heapUsed + held.external);
    child.kill();
  }
  const uploadBytes = concurrent * 3 * UPLOAD;
  const rssPeakGrowth = median(peaks);
  const heldGrowth = median(helds);
  return {
    kind,
    baseline: steady ? 'steady' : 'collected',
    concurrent,
    uploadBytes,
    rssPeakGrowth,
    heldGrowth,
    rssMultiple: rssPeakGrowth / uploadBytes,
    heldMultiple: heldGrowth / uploadBytes,
    upstreamBodyBytes: upstream.lastBodyBytes,
  };
}

export async function measureMultipartEdits(children: ChildProcess[], runs = 5, concurrency: readonly number[] = [1, 4]): Promise<MultipartFigures[]> {
  const upstream = new SlowUpstream();
  await upstream.listen();
  const figures: MultipartFigures[] = [];
  try {
    for (const kind of Object.keys(MODELS) as UpstreamKind[]) {
      for (const steady of [false, true]) for (const concurrent of concurrency) figures.push(await measure(kind, concurrent, runs, upstream, children, steady));
    }
  } finally {
    upstream.close();
  }
  return figures;
}

export function printMultipartFigures(figures: readonly MultipartFigures[]): void {
  console.log('\nmultipart edits, three 5 MiB uploads each, held by a slow upstream (fresh gateway per run, median)');
  console.log('| upstream | baseline | edits at once | upload bytes | upstream body per edit | peak RSS growth | × uploads | held after GC (heap + off-heap) | × uploads |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const f of figures) {
    console.log(
      `| ${f.kind} | ${f.baseline} | ${f.concurrent} | ${(f.uploadBytes / MiB).toFixed(0)} MiB | ${(f.upstreamBodyBytes / MiB).toFixed(1)} MiB | ${(f.rssPeakGrowth / MiB).toFixed(1)} MiB | ${f.rssMultiple.toFixed(2)} | ${f.baseline === 'steady' ? '—' : `${(f.heldGrowth / MiB).toFixed(1)} MiB`} | ${f.baseline === 'steady' ? '—' : f.heldMultiple.toFixed(2)} |`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const children: ChildProcess[] = [];
  const concurrency = (process.env.BENCH_EDITS ?? '1,4').split(',').map(Number);
  measureMultipartEdits(children, Number(process.env.BENCH_RUNS ?? 5), concurrency)
    .then((figures) => {
      printMultipartFigures(figures);
      console.log(`\nMULTIPART_RESULT ${JSON.stringify(figures)}`);
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => {
      for (const child of children) child.kill();
    });
}
