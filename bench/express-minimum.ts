// The Express minimum (child process): the least a relay mounted in a host Express app can cost, the
// bound under the Express floor (express-floor.ts). An Express router with one route that compares the
// key, reads the raw body, parses it and sends it on with undici's Pool (the gateway's own client),
// then sends the answer back whole in one `res.end`. No validation, no limits, no deadlines, no
// usage: what is left is Express, Node's HTTP and the upstream call. Prints {"port"} when listening;
// see docs/benchmarks.md "Against the Express floor".
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Pool } from 'undici';

const KEY = 'Bearer sk-bench-0123456789';
const pool = new Pool(`http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`, { connections: 256 });
const router = express.Router();

router.post(['/v1/chat/completions', '/api/v1/services/aigc/multimodal-generation/generation'], (req, res) => {
  if (req.headers.authorization !== KEY) {
    res.status(401).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
    pool
      .request({ method: 'POST', path: req.originalUrl, headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify(body) })
      .then(async (answer) => {
        const contentType = answer.headers['content-type'];
        res.status(answer.statusCode);
        res.setHeader('content-type', typeof contentType === 'string' ? contentType : 'application/json');
        if (body.stream === true) {
          // relayed as it comes, as the gateway's streams are
          for await (const chunk of answer.body) res.write(chunk);
          res.end();
          return;
        }
        const whole = Buffer.from(await answer.body.arrayBuffer());
        res.setHeader('content-length', whole.length);
        res.end(whole);
      })
      .catch(() => {
        if (!res.headersSent) res.status(502);
        res.end();
      });
  });
});

const app = express();
app.use(router);
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
server.keepAliveTimeout = 60_000;
// a clean exit on SIGINT lets `--cpu-prof` write its profile
process.on('SIGINT', () => process.exit(0));
