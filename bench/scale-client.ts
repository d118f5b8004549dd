// The scale scenario's load client (child process, so its sockets count against its own file
// limit, not the gateway's): opens BENCH_COUNT requests, each on its own connection, ramped in
// steps (a burst larger than the listen backlog only costs SYN retries), holds them until every
// one is answered, and prints {"statuses", "rampMs", "totalMs", "slowestMs"}. Signals "ramped"
// on stdout once every request is sent, so the parent can read the gateway's probes at full load.
import http from 'node:http';

const url = new URL(process.env.BENCH_URL!);
const count = Number(process.env.BENCH_COUNT);
const body = process.env.BENCH_BODY!;
const KEY = 'sk-bench-0123456789';
const STEP = 100;

const statuses: Record<string, number> = {};
let slowestMs = 0;
const started = performance.now();

function one(): Promise<void> {
  return new Promise((resolve) => {
    const sent = performance.now();
    const done = (status: string): void => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      slowestMs = Math.max(slowestMs, performance.now() - sent);
      resolve();
    };
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.once('end', () => done(String(res.statusCode)));
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
process.stdout.write(`${JSON.stringify({ statuses, rampMs, totalMs: performance.now() - started, slowestMs })}\n`);
