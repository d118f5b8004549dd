// The floor (child process): the least any Node reverse proxy costs. Pipes each request to the
// upstream with a keep-alive agent and pipes the answer back, nothing else. Prints {"port"}.
// BENCH_PROBES=1 adds the same GET /__bench/rss/* probes as the gateway (scale figures);
// BENCH_SCALE=N lets N requests hold an upstream socket each, as the gateway does then.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { installProbes } from './probes.js';

const target = Number(process.env.BENCH_UPSTREAM_PORT);
const scale = Number(process.env.BENCH_SCALE ?? 0);
const agent = new http.Agent({ keepAlive: true, maxSockets: scale > 0 ? scale : 256 });
const probe = process.env.BENCH_PROBES === '1' ? installProbes() : () => false;

const server = http.createServer((req, res) => {
  if (probe(req, res)) return;
  const upstream = http.request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', Number(process.env.BENCH_BACKLOG ?? 511), () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
