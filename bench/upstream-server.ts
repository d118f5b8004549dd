// Benchmark upstream (child process): answers as fast as Node can, so what is measured is the
// proxy in front of it. Chat JSON (OpenAI shape), DashScope image generation, a 20-chunk SSE
// stream, and a large "image" for b64_json downloads. Prints {"port"} when listening.
// BENCH_DELAY_MS: image generations answer that much later (the scale scenario's slow upstream).
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 0);
const IMAGE_BYTES = Number(process.env.BENCH_IMAGE_BYTES ?? 8 * 1024 * 1024);
// a PNG signature then noise: the gateway never decodes images, the size is what matters
const image = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(IMAGE_BYTES - 8)]);
const chat = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1720000000,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, this is a benchmark answer.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 },
});
const chunk = (text: string) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;

let port = 0;
// the scale scenario: how many slow answers this upstream held at once (= requests in flight through the proxy)
let held = 0;
let heldPeak = 0;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (part: Buffer) => chunks.push(part));
  req.on('end', () => {
    const url = req.url ?? '';
    if (url === '/__bench/held') {
      res.end(JSON.stringify({ peak: heldPeak }));
      return;
    }
    if (url.startsWith('/image.png')) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': image.length });
      res.end(image);
      return;
    }
    if (url.endsWith('/chat/completions')) {
      const body = Buffer.concat(chunks).toString();
      if (body.includes('"stream":true')) return stream(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(chat) });
      res.end(chat);
      return;
    }
    if (url.endsWith('/multimodal-generation/generation')) {
      const n = /"n":(\d)/.exec(Buffer.concat(chunks).toString('latin1', 0, Math.min(4096, req.headers['content-length'] ? Number(req.headers['content-length']) : 4096)));
      const count = n ? Number(n[1]) : 1;
      const body = JSON.stringify({
        output: { choices: Array.from({ length: count }, () => ({ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `http://127.0.0.1:${port}/image.png` }] } })) },
        usage: { width: 1024, height: 1024, image_count: count },
        request_id: 'bench-req',
      });
      const answer = (): void => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (DELAY_MS > 0) {
        held += 1;
        heldPeak = Math.max(heldPeak, held);
        setTimeout(() => {
          held -= 1;
          answer();
        }, DELAY_MS);
      } else answer();
      return;
    }
    res.writeHead(404);
    res.end();
  });
});

/** 20 chunks: the first at once, then one every 2 ms. */
function stream(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const next = (): void => {
    res.write(chunk(`w${sent}`));
    sent += 1;
    if (sent < 20) setTimeout(next, 2);
    else res.end('data: [DONE]\n\n');
  };
  next();
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', Number(process.env.BENCH_BACKLOG ?? 511), () => {
  port = (server.address() as AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
