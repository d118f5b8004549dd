// The runnable example (`npm start`): a host Express app with its own route and the gateway mounted at
// the root. Model names `x-image-*` go to DashScope: the real one when DASHSCOPE_API_KEY is set, else a
// simulated DashScope on a free local port, so the example works with no account. It exports the app
// and listens only when run directly (the express examples' pattern): spec/e2e imports it, so what the
// README shows cannot silently stop working.
import type { Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createGatewayRouter, staticKeys, type Upstream } from '../lib/index.js';
import { startSimulatedDashscope } from './simulated-dashscope.js';

export interface ExampleAppOptions {
  /** DashScope base (SDK convention, ending in /api/v1). Given: used as is, no simulation started. */
  dashscopeBaseURL?: string;
  /** Key for that DashScope. Default: DASHSCOPE_API_KEY, or a placeholder for a simulated upstream. */
  dashscopeApiKey?: string;
}

export interface ExampleApp {
  app: express.Express;
  /** The one caller key this example accepts (GATEWAY_DEMO_KEY, default `sk-demo-local-only`). */
  demoKey: string;
  /** Where `x-image-*` requests go (never carries a key). */
  upstreamBaseURL: string;
  /** True when the app started its own simulated DashScope. */
  simulated: boolean;
  /** Closes the gateway and, if one was started, the simulated DashScope. Safe to call twice. */
  close(): Promise<void>;
}

export const DASHSCOPE_INTL_BASE_URL = 'https://dashscope-intl.aliyuncs.com/api/v1';
// the simulation accepts any non-empty key (upstreams.md §1.2), so a placeholder is enough
const SIMULATED_UPSTREAM_KEY = 'sk-simulated-dashscope';

// caller-facing names (spec §1) -> DashScope model names (upstreams.md §1.3)
const EXACT_MODELS: Readonly<Record<string, string>> = {
  'x-image-2.0': 'qwen-image-2.0',
  'x-image-2.0-pro': 'qwen-image-2.0-pro',
  'x-image-max': 'qwen-image-max',
  'x-image-plus': 'qwen-image-plus',
  'x-image-edit': 'qwen-image-edit-plus',
};

/** The DashScope model behind a caller-facing `x-image-*` name, or undefined for any other name. */
export function dashscopeModelFor(model: string): string | undefined {
  const exact = EXACT_MODELS[model];
  if (exact) return exact;
  if (!model.startsWith('x-image-')) return undefined;
  // every edit variant (spec §1 `x-image-edit*`) runs on the multi-image edit model
  if (model.startsWith('x-image-edit')) return 'qwen-image-edit-plus';
  // x-image-2.0-<snapshot> -> qwen-image-2.0-<snapshot>, and the same rule for other x-image-* names
  return `qwen-image-${model.slice('x-image-'.length)}`;
}

export async function createExampleApp(options: ExampleAppOptions = {}): Promise<ExampleApp> {
  const demoKey = process.env.GATEWAY_DEMO_KEY ?? 'sk-demo-local-only';

  let upstream: { baseURL: string; apiKey: string };
  let simulation: { close(): Promise<void> } | undefined;
  const realKey = options.dashscopeApiKey ?? process.env.DASHSCOPE_API_KEY;
  if (options.dashscopeBaseURL) {
    upstream = { baseURL: options.dashscopeBaseURL, apiKey: realKey ?? SIMULATED_UPSTREAM_KEY };
  } else if (realKey) {
    upstream = { baseURL: process.env.DASHSCOPE_BASE_URL ?? DASHSCOPE_INTL_BASE_URL, apiKey: realKey };
  } else {
    const simulated = await startSimulatedDashscope();
    simulation = simulated;
    upstream = { baseURL: simulated.baseURL, apiKey: SIMULATED_UPSTREAM_KEY };
  }

  const gateway = createGatewayRouter({
    verifyKey: staticKeys({ [demoKey]: { id: 'demo-tenant' } }),
    resolveUpstream: ({ model, route }): Upstream | null => {
      // DashScope's multimodal-generation call serves the image routes only
      if (route !== 'images.generations' && route !== 'images.edits') return null;
      const dashscopeModel = dashscopeModelFor(model);
      if (!dashscopeModel) return null; // -> 404 model_not_found
      return { provider: 'dashscope', baseURL: upstream.baseURL, apiKey: upstream.apiKey, model: dashscopeModel };
    },
    // metering, the way a SaaS host would bill per tenant; keys never reach this line
    onUsage: (event) => {
      console.log(`[usage] caller=${event.caller.id} model=${event.model} status=${event.status} latencyMs=${Math.round(event.latencyMs)}`);
    },
    // the gateway never hands its logger a key; info stays quiet to keep the console readable
    logger: { warn: console.warn, error: console.error },
  });

  const app = express();
  // the host app's own route: the gateway only answers its own paths and lets the rest fall through
  app.get('/', (_req, res) => {
    res.json({
      hello: 'This host app serves the image gateway at its root.',
      gateway: {
        openai_base_url: '/v1',
        endpoints: ['POST /v1/images/generations'],
        models: Object.keys(EXACT_MODELS),
        upstream: simulation ? 'simulated DashScope (set DASHSCOPE_API_KEY to use the real one)' : 'DashScope',
      },
    });
  });
  app.use(gateway);

  let closed = false;
  return {
    app,
    demoKey,
    upstreamBaseURL: upstream.baseURL,
    simulated: simulation !== undefined,
    close: async () => {
      if (closed) return;
      closed = true;
      await gateway.close();
      await simulation?.close();
    },
  };
}

/** Copy-paste material for the console: curl for each variant and the official openai SDK. */
function usageText(base: string, key: string): string {
  const json = (body: unknown): string => JSON.stringify(body).replace(/'/g, "'\\''");
  const curl = (body: unknown): string =>
    `curl -s ${base}/v1/images/generations \\\n  -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\\n  -d '${json(body)}'`;
  const subject = 'https://dashscope.oss-cn-beijing.aliyuncs.com/images/dog_and_girl.jpeg';
  const style = 'https://dashscope.oss-cn-beijing.aliyuncs.com/images/tiger.png';
  const text = (value: string) => ({ text: value });
  const message = (...content: Array<{ text: string } | { image: string }>) => ({ messages: [{ role: 'user', content }] });
  return [
    '# text-to-image (spec §4.1)',
    curl({ model: 'x-image-2.0', prompt: 'placeholder', input: message(text('A lighthouse at dawn, watercolour')), parameters: { size: '1024*1024', n: 1 } }),
    '',
    '# single-image edit: 1 image + 1 text',
    curl({ model: 'x-image-edit', prompt: 'placeholder', input: message({ image: subject }, text('Turn the scene into a snowy winter day')) }),
    '',
    '# multi-image edit: up to 3 images in order (subject, style, background) + 1 text',
    curl({
      model: 'x-image-edit',
      prompt: 'placeholder',
      input: message({ image: subject }, { image: style }, text('Paint the girl and the dog of image 1 in the colours of the tiger in image 2')),
    }),
    '',
    '# the image itself instead of a URL: response_format b64_json',
    curl({ model: 'x-image-2.0', prompt: 'placeholder', input: message(text('A red bicycle in the rain')), response_format: 'b64_json' }),
    '',
    '# upload files instead (multipart, as the openai SDKs send images.edit): save an image of the first call as in.png',
    `curl -s ${base}/v1/images/edits -H 'Authorization: Bearer ${key}' \\\n  -F model=x-image-edit -F prompt='Make it night' -F 'image[]=@in.png' -F size=1024x1024`,
    '',
    '# the official openai SDK (npm i openai), unchanged:',
    "import OpenAI from 'openai';",
    `const client = new OpenAI({ baseURL: '${base}/v1', apiKey: '${key}' });`,
    "const image = await client.images.generate({ model: 'x-image-2.0', prompt: 'A lighthouse at dawn, watercolour' });",
    'console.log(image.data?.[0]?.url);',
  ].join('\n');
}

async function main(): Promise<void> {
  const example = await createExampleApp();
  const port = Number(process.env.PORT ?? 3000);
  const server: Server = example.app.listen(port);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const base = `http://localhost:${port}`;
  console.log(`Image gateway example listening on ${base}`);
  console.log(`Upstream: ${example.simulated ? 'simulated DashScope at ' : 'DashScope at '}${example.upstreamBaseURL}`);
  console.log(`Demo key (local use only): ${example.demoKey}\n`);
  console.log(usageText(base, example.demoKey));

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: shutting down`);
    server.close();
    // keep-alive clients would otherwise hold the process open
    server.closeAllConnections();
    example.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// listen only when run directly (`tsx examples/server.ts`), never when imported by the specs
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
