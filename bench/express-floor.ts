// The Express floor (child process): what a naive proxy written in a host Express app costs, the
// gateway's nearest like-for-like. A fresh Express app with `express.json()` and one route per
// upstream path that sends the parsed body on with node:http (or fetch, BENCH_FLOOR_CLIENT=fetch)
// and relays the answer as it comes. No authentication, validation or
// translation. Prints {"port"} when listening; see docs/benchmarks.md.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

const upstream = `http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`;
const app = express();
app.use(express.json({ limit: '50mb' }));

/** The relay with fetch (undici): the whole body for JSON, chunk by chunk for a stream. */
const relayWithFetch = async (req: express.Request, res: express.Response): Promise<void> => {
  const answer = await fetch(`${upstream}${req.originalUrl}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(req.body),
  });
  res.status(answer.status);
  res.setHeader('content-type', answer.headers.get('content-type') ?? 'application/json');
  if (answer.body === null) {
    res.end();
    return;
  }
  if ((req.body as { stream?: boolean }).stream === true) {
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
    return;
  }
  res.end(Buffer.from(await answer.arrayBuffer()));
};

/** The relay with node:http (its global agent keeps connections alive): the answer piped as it comes. */
const relayWithHttp = (req: express.Request, res: express.Response): Promise<void> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify(req.body);
    const outbound = http.request(
      `${upstream}${req.originalUrl}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer k' } },
      (answer) => {
        res.status(answer.statusCode ?? 502);
        res.setHeader('content-type', answer.headers['content-type'] ?? 'application/json');
        answer.pipe(res);
        answer.on('end', resolve);
        answer.on('error', reject);
      },
    );
    outbound.on('error', reject);
    outbound.end(body);
  });

// the cheaper of the two naive relays by default (node:http); BENCH_FLOOR_CLIENT=fetch for the other
const relay = process.env.BENCH_FLOOR_CLIENT === 'fetch' ? relayWithFetch : relayWithHttp;

app.post(['/v1/chat/completions', '/api/v1/services/aigc/multimodal-generation/generation'], (req, res) => {
  relay(req, res).catch(() => {
    if (!res.headersSent) res.status(502);
    res.end();
  });
});

const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
server.keepAliveTimeout = 60_000;
// a clean exit on SIGINT lets `--cpu-prof` write its profile
process.on('SIGINT', () => process.exit(0));
