// The adapter bench's upstream (child process): one server that answers every vendor's image call in
// that vendor's wire format as fast as Node can, with the same small PNG, so what differs between the
// adapters is the gateway's own work (translation, calls per image, answer reading). Prints {"port"}.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// a 1x1 PNG: the answer's size is not what this bench measures (bench/run.ts measures downloads)
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const B64 = PNG.toString('base64');
let port = 0;

type Answer = { status?: number; body: unknown };
type Route = { method: string; match: RegExp; answer(body: string, path: string): Answer };

const openAIImages: Answer = { body: { created: 1795000000, data: [{ b64_json: B64 }], usage: { input_tokens: 5, output_tokens: 272, total_tokens: 277 } } };
const googleImage: Answer = {
  body: {
    candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: 'image/png', data: B64 } }] }, finishReason: 'STOP' }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1290 },
    responseId: 'bench',
  },
};

const ROUTES: Route[] = [
  // OpenAI-compatible and Azure's v1 form: gpt-image bytes
  { method: 'POST', match: /^\/v1\/images\/generations$/, answer: () => openAIImages },
  { method: 'POST', match: /^\/openai\/v1\/images\/generations$/, answer: () => openAIImages },
  // the Gemini API and Vertex AI: generateContent with one inlineData part
  { method: 'POST', match: /^\/v1beta\/models\/[^/]+:generateContent$/, answer: () => googleImage },
  { method: 'POST', match: /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/[^/]+:generateContent$/, answer: () => googleImage },
  // DashScope's multimodal generation and Ark's Seedream: a URL to the image
  {
    method: 'POST',
    match: /^\/api\/v1\/services\/aigc\/multimodal-generation\/generation$/,
    answer: () => ({
      body: {
        output: { choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: [{ image: `http://127.0.0.1:${port}/image.png` }] } }] },
        usage: { width: 1024, height: 1024, image_count: 1 },
        request_id: 'bench',
      },
    }),
  },
  {
    method: 'POST',
    match: /^\/api\/v3\/images\/generations$/,
    answer: () => ({ body: { model: 'seedream', created: 1795000000, data: [{ url: `http://127.0.0.1:${port}/image.png`, size: '1024x1024' }], usage: { generated_images: 1 } } }),
  },
  // fal's queue (docs/providers/fal.md): the submit, a status read that is already COMPLETED, the result
  {
    method: 'POST',
    match: /^\/fal-ai\/flux\/dev$/,
    answer: () => {
      const id = `req-${(requests += 1)}`;
      const base = `http://127.0.0.1:${port}/fal-ai/flux/requests/${id}`;
      return { body: { request_id: id, status: 'IN_QUEUE', status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` } };
    },
  },
  { method: 'GET', match: /^\/fal-ai\/flux\/requests\/[^/]+\/status$/, answer: () => ({ body: { status: 'COMPLETED', logs: null, metrics: { inference_time: 0.1 } } }) },
  {
    method: 'GET',
    match: /^\/fal-ai\/flux\/requests\/[^/]+$/,
    answer: () => ({
      body: { images: [{ url: `http://127.0.0.1:${port}/image.png`, width: 1024, height: 1024, content_type: 'image/png' }], seed: 1, has_nsfw_concepts: [false], prompt: 'a lighthouse at dawn' },
    }),
  },
  // Replicate: a prediction that succeeded within its `Prefer: wait`
  {
    method: 'POST',
    match: /^\/v1\/models\/black-forest-labs\/flux-schnell\/predictions$/,
    answer: () => {
      const id = `p${(requests += 1)}`;
      return {
        status: 201,
        body: {
          id,
          model: 'black-forest-labs/flux-schnell',
          version: 'hidden',
          input: {},
          logs: '',
          output: [`http://127.0.0.1:${port}/image.png`],
          data_removed: false,
          error: null,
          status: 'succeeded',
          created_at: new Date().toISOString(),
          urls: { get: `https://api.replicate.com/v1/predictions/${id}`, cancel: `https://api.replicate.com/v1/predictions/${id}/cancel` },
          metrics: { predict_time: 0.1 },
        },
      };
    },
  },
];
let requests = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (part: Buffer) => chunks.push(part));
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/image.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      res.end(PNG);
      return;
    }
    const route = ROUTES.find((candidate) => candidate.method === req.method && candidate.match.test(path));
    const answer: Answer = route ? route.answer(Buffer.concat(chunks).toString(), path) : { status: 404, body: { error: { message: `no route ${req.method} ${path}` } } };
    const text = JSON.stringify(answer.body);
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  port = (server.address() as AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
