// The image-streams scenario's load client (child process, so its sockets count against its own file
// limit): opens BENCH_COUNT image requests, each on its own connection, ramped in steps, reads every
// answer to its end, and prints {"statuses", "completed", "keepAlives": [min, median, max],
// "longestQuietMs", "rampMs", "totalMs"}. "longestQuietMs" is the longest stretch any stream went
// without a byte after its first one: what a proxy's idle timer sees. Signals "ramped" once every
// request is sent, so the parent reads the gateway's probes at full load.
import http from 'node:http';

const url = new URL(process.env.BENCH_URL!);
const count = Number(process.env.BENCH_COUNT);
const body = process.env.BENCH_BODY!;
const KEY = 'sk-bench-0123456789';
const STEP = 100;
const KEEP_ALIVE = ': keep-alive\n\n';

const statuses: Record<string, number> = {};
const keepAlives: number[] = [];
let completed = 0;
let longestQuietMs = 0;
const started = performance.now();

function one(): Promise<void> {
  return new Promise((resolve) => {
    const done = (status: string): void => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      resolve();
    };
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let last = 0;
        let comments = 0;
        // the tail of the text so far: a marker may be cut by a chunk edge
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          if (last > 0) longestQuietMs = Math.max(longestQuietMs, now - last);
          last = now;
          const text = tail + chunk;
          comments += text.split(KEEP_ALIVE).length - 1 - (tail.split(KEEP_ALIVE).length - 1);
          completed += text.split('event: image_generation.completed').length - 1 - (tail.split('event: image_generation.completed').length - 1);
          tail = text.slice(-64);
        });
        res.once('end', () => {
          keepAlives.push(comments);
          done(String(res.statusCode));
        });
        res.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
      },
    );
    req.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
    req.end(body);
  });
}

const pending: Promise<void>[] = [];
for (let i = 0; i < count; i += STEP) {
  for (let j = i; j < Math.min(count, i + STEP); j += 1) pending.push(one());
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const rampMs = performance.now() - started;
process.stdout.write('ramped\n');
await Promise.all(pending);
keepAlives.sort((a, b) => a - b);
const spread = keepAlives.length > 0 ? [keepAlives[0]!, keepAlives[Math.floor(keepAlives.length / 2)]!, keepAlives.at(-1)!] : [0, 0, 0];
process.stdout.write(`${JSON.stringify({ statuses, completed, keepAlives: spread, longestQuietMs, rampMs, totalMs: performance.now() - started })}\n`);
