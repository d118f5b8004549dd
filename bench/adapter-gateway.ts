// The adapter bench's gateway (child process, and the model table the driver imports): a host Express
// app with the router mounted, one caller-facing model per upstream adapter, all on the bench upstream
// (adapter-upstreams.ts). Prints {"port"} when run as a child.
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createGatewayRouter, staticKeys, type Upstream } from '../lib/index.js';

export const ADAPTER_KEY = 'sk-bench-adapters-0123456789';

/** Each caller-facing model: the adapter it exercises, and what that adapter does for one image. */
export const ADAPTER_MODELS = {
  'openai-compatible': 'relays the body, answers it as it came',
  azure: 'the same relay at the v1 URL form, api-key',
  gemini: 'translates to generateContent, reads inlineData',
  vertex: 'as gemini, with a bearer token from the host',
  dashscope: 'translates to multimodal generation, answers its URL',
  ark: 'translates to Seedream, answers its URL',
  fal: "submits to fal's queue, reads the status, then the result",
  replicate: 'creates a prediction with Prefer: wait, answers its output URL',
} as const;

export function adapterUpstream(model: string, origin: string): Upstream | null {
  switch (model) {
    case 'openai-compatible':
      return { provider: 'openai', baseURL: `${origin}/v1`, apiKey: 'k', model: 'gpt-image-1' };
    case 'azure':
      return { provider: 'azure', baseURL: origin, apiKey: 'k', model: 'gpt-image-1' };
    case 'gemini':
      return { provider: 'gemini', baseURL: `${origin}/v1beta`, apiKey: 'k', model: 'gemini-2.5-flash-image' };
    case 'vertex':
      return { provider: 'vertex', baseURL: origin, project: 'bench', location: 'global', getAccessToken: () => 'token', model: 'gemini-2.5-flash-image' };
    case 'dashscope':
      return { provider: 'dashscope', baseURL: `${origin}/api/v1`, apiKey: 'k', model: 'qwen-image-2.0' };
    case 'ark':
      return { provider: 'ark', baseURL: `${origin}/api/v3`, apiKey: 'k', model: 'doubao-seedream-4-0-250828' };
    case 'fal':
      return { provider: 'fal', baseURL: origin, apiKey: 'k', model: 'fal-ai/flux/dev' };
    case 'replicate':
      return { provider: 'replicate', baseURL: `${origin}/v1`, apiKey: 'k', model: 'black-forest-labs/flux-schnell' };
    default:
      return null;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const origin = `http://127.0.0.1:${process.env.BENCH_UPSTREAM_PORT}`;
  const app = express();
  app.use(createGatewayRouter({ verifyKey: staticKeys({ [ADAPTER_KEY]: { id: 'bench' } }), resolveUpstream: ({ model }) => adapterUpstream(model, origin), logger: false }));
  const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
  server.keepAliveTimeout = 60_000;
}
