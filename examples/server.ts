// The runnable example (`npm start`): a host Express app with the playground at `/`, its own callback
// receiver, and the gateway mounted at the root. Every upstream the gateway speaks is simulated on a
// free loopback port unless that vendor's key is set (DASHSCOPE_API_KEY, ARK_API_KEY,
// VOLCENGINE_ACCESS_KEY_ID + VOLCENGINE_SECRET_ACCESS_KEY, OPENAI_API_KEY, AZURE_OPENAI_API_KEY +
// AZURE_OPENAI_ENDPOINT, GEMINI_API_KEY, FAL_KEY, REPLICATE_API_TOKEN), so the example works with
// no account and no internet. It exports the app and listens only when run directly (the express
// examples' pattern): spec/e2e imports it, so what the docs show cannot silently stop working.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createGatewayRouter, type ModelEntry, modelEntry, openAIModeration, type PricingOptions, staticKeys, type Upstream, type UsageEvent } from '../lib/index.js';
import { createPlayground } from '../lib/playground.js';
import { localResultStorage } from '../lib/storage.js';
import { makeExampleSigner } from './c2pa-certificates.js';
import { type CallbackReceiver, createCallbackReceiver } from './callback-receiver.js';
import { startSimulatedArk } from './simulated-ark.js';
import { startSimulatedAzure } from './simulated-azure.js';
import { startSimulatedDashscope } from './simulated-dashscope.js';
import { startSimulatedFal } from './simulated-fal.js';
import { SIMULATED_GEMINI_KEY, startSimulatedGemini } from './simulated-gemini.js';
import { startSimulatedReplicate } from './simulated-replicate.js';
import { startSimulatedLlm } from './simulated-llm.js';
import { startSimulatedModeration } from './simulated-moderation.js';
import { startSimulatedVolcengine } from './simulated-volcengine.js';
import { startRoutingSimulations } from './simulated-routing.js';

export type Vendor = 'dashscope' | 'ark' | 'volcengine' | 'openai' | 'azure' | 'gemini' | 'fal' | 'replicate';

export interface ExampleAppOptions {
  /** DashScope base (SDK convention, ending in /api/v1). Given: used as is, no simulation started. */
  dashscopeBaseURL?: string;
  /** Key for that DashScope. Default: DASHSCOPE_API_KEY, or a placeholder for a simulated upstream. */
  dashscopeApiKey?: string;
  /** Where the variables below are read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The address the app will listen on. Callbacks to loopback and private targets (the example's own
   * receiver) are allowed only while it is a loopback address. Default `HOST`, else 127.0.0.1.
   */
  host?: string;
  /** Timing of the simulated Ark's tasks. Default queued 1.5 s, then running 2.5 s. */
  arkTiming?: { queuedMs?: number; runningMs?: number };
  /** The flapping upstream of `x-image-2.0` (examples/simulated-routing.ts). Default up 30 s, then down 30 s. */
  routingTiming?: { upMs?: number; downMs?: number };
  /** Durable results in `resultsDirectory`; false answers the upstreams' own URLs. Default true. */
  storage?: boolean;
  /**
   * Content Credentials (docs/provenance.md): every image read and reported, and signed with a CA and
   * signing certificate made at start (signing needs `storage`). Off: images pass unread. `npm start`
   * turns it on; default false, so the specs of the other features see the vendors' bytes as sent.
   */
  provenance?: boolean;
}

export interface UpstreamInfo {
  simulated: boolean;
  /** Where requests go (never carries a key). */
  baseURL: string;
  /** The variable(s) that switch it to the real vendor. */
  keyVariables: string;
}

export interface ExampleApp {
  app: express.Express;
  /** The one caller key this example accepts (GATEWAY_DEMO_KEY, default `sk-demo-local-only`). */
  demoKey: string;
  /** Whether the playground fills the key in: only while no real vendor key can be spent through it from beyond this machine. */
  keyFilledIn: boolean;
  /** Warnings to print at start (an address beyond loopback). */
  warnings: readonly string[];
  /** Where `x-image-*` requests go (never carries a key). */
  upstreamBaseURL: string;
  /** True when the app started its own simulated DashScope. */
  simulated: boolean;
  /** Each vendor: simulated or real, and where. */
  upstreams: Readonly<Record<Vendor, UpstreamInfo>>;
  /** The content checker: OpenAI's moderation API, or its simulation (docs/content-safety.md). */
  moderation: UpstreamInfo;
  /** The example's own callback receiver at `/hooks/video`. */
  callbacks: CallbackReceiver;
  /** Whether every image is signed with the example's own CA and reported (docs/provenance.md). */
  provenance: boolean;
  /** Whether callbacks may target loopback/private hosts (only while listening on loopback). */
  localCallbacks: boolean;
  /** Where the durable results are stored (RESULTS_DIR, default a folder under the OS temp directory). */
  resultsDirectory: string;
  /** Closes the gateway and every simulation it started. Safe to call twice. */
  close(): Promise<void>;
}

export const DASHSCOPE_INTL_BASE_URL = 'https://dashscope-intl.aliyuncs.com/api/v1';
export const ARK_BASE_URL = 'https://ark.cn-beijing.volces.com/api/v3';
export const VOLCENGINE_OPENAPI_URL = 'https://ark.cn-beijing.volcengineapi.com';
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** The Azure OpenAI deployment behind `x-gpt-image` unless AZURE_OPENAI_IMAGE_DEPLOYMENT names another. */
export const AZURE_IMAGE_DEPLOYMENT = 'gpt-image-1';
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';
export const FAL_BASE_URL = 'https://queue.fal.run';
export const REPLICATE_BASE_URL = 'https://api.replicate.com/v1';

/**
 * The vendor model behind each caller-facing name of the newer vendors (docs/providers/), each one
 * replaceable by a variable (GEMINI_IMAGE_MODEL, ...): vendors rename models every few months, so the
 * ids are configuration, never code.
 */
export const VENDOR_MODELS = {
  'x-gemini-image': { vendor: 'gemini', model: 'gemini-2.5-flash-image', variable: 'GEMINI_IMAGE_MODEL', route: 'images' },
  'x-veo': { vendor: 'gemini', model: 'veo-3.1-generate-preview', variable: 'GEMINI_VIDEO_MODEL', route: 'video' },
  'x-flux': { vendor: 'fal', model: 'fal-ai/flux/dev', variable: 'FAL_IMAGE_MODEL', route: 'images' },
  'x-kling': { vendor: 'fal', model: 'fal-ai/kling-video/v2.1/standard/text-to-video', variable: 'FAL_VIDEO_MODEL', route: 'video' },
  'x-flux-schnell': { vendor: 'replicate', model: 'black-forest-labs/flux-schnell', variable: 'REPLICATE_IMAGE_MODEL', route: 'images' },
  'x-kling-replicate': { vendor: 'replicate', model: 'kwaivgi/kling-v2.1', variable: 'REPLICATE_VIDEO_MODEL', route: 'video' },
} as const satisfies Record<string, { vendor: Vendor; model: string; variable: string; route: 'images' | 'video' }>;
type VendorModelName = keyof typeof VENDOR_MODELS;
// the simulations accept any non-empty key, so a placeholder is enough
const SIMULATED_KEY = 'sk-simulated-upstream';
const SIMULATED_AK = 'AKLTsimulated';
const SIMULATED_SK = 'c2ltdWxhdGVkLXNlY3JldA==';

// caller-facing names (contract §1) -> DashScope model names (upstreams §1.3)
const EXACT_MODELS: Readonly<Record<string, string>> = {
  'x-image-2.0': 'qwen-image-2.0',
  'x-image-2.0-pro': 'qwen-image-2.0-pro',
  'x-image-max': 'qwen-image-max',
  'x-image-plus': 'qwen-image-plus',
  'x-image-edit': 'qwen-image-edit-plus',
};
/** The other routes' caller-facing names. */
export const CHAT_MODEL = 'x-chat';
export const VIDEO_MODEL = 'x-video';
export const SEEDREAM_MODEL = 'x-seedream';
/** gpt-image on an Azure OpenAI resource (docs/providers/azure.md). */
export const AZURE_IMAGE_MODEL = 'x-gpt-image';

/** The DashScope model behind a caller-facing `x-image-*` name, or undefined for any other name. */
export function dashscopeModelFor(model: string): string | undefined {
  const exact = EXACT_MODELS[model];
  if (exact) return exact;
  if (!model.startsWith('x-image-')) return undefined;
  // every edit variant (contract §1 `x-image-edit*`) runs on the multi-image edit model
  if (model.startsWith('x-image-edit')) return 'qwen-image-edit-plus';
  // x-image-2.0-<snapshot> -> qwen-image-2.0-<snapshot>, and the same rule for other x-image-* names
  return `qwen-image-${model.slice('x-image-'.length)}`;
}

/**
 * The example's prices (docs/tenancy-and-billing.md "Cost in money"): illustrative figures, not any
 * vendor's list price, so the printed usage and the playground show what each request cost.
 */
export const EXAMPLE_PRICING: PricingOptions = {
  currency: 'USD',
  models: {
    'x-image-2.0*': { image: 0.035 },
    'x-image-max': { image: 0.075 },
    'x-image-plus': { image: 0.03 },
    'x-image-edit*': { image: 0.03 },
    'x-seedream': { image: 0.03 },
    'x-gpt-image': { image: 0.04 },
    'x-gemini-image': { image: 0.039 },
    'x-flux': { image: 0.025 },
    'x-flux-schnell': { image: 0.003 },
    'x-veo': { videoSecond: { default: 0.4 } },
    'x-kling': { videoSecond: { default: 0.05 } },
    'x-kling-replicate': { videoSecond: { default: 0.05 } },
    'x-video': { videoSecond: { default: 0.05, by: { '1080p': 0.1 } } },
    'x-chat': { tokens: { input: 0.15, output: 0.6 } },
  },
};

/** Every caller-facing name of the example, in the order GET /v1/models lists them. */
export const EXAMPLE_MODEL_NAMES: readonly string[] = [
  ...Object.keys(EXACT_MODELS),
  SEEDREAM_MODEL,
  AZURE_IMAGE_MODEL,
  'x-gemini-image',
  'x-flux',
  'x-flux-schnell',
  VIDEO_MODEL,
  'x-veo',
  'x-kling',
  'x-kling-replicate',
  CHAT_MODEL,
];

/**
 * The example's catalogue, in the order GET /v1/models lists it: its own names over the default rows of
 * the models behind them. The contract's families cover the `x-image-*` names (`x-image-2.0-pro` gets
 * its family's rules under its own name, so it is listed too); `x-seedream` and `x-video` take the rows
 * of the Ark models they run on, `x-gpt-image` the row of the gpt-image deployment behind it, and the
 * newer vendors' names ({@link VENDOR_MODELS}) the rows of theirs; `x-chat` is described here. The default vendor rows follow (the
 * resolver routes none of them, so none is listed).
 */
export function exampleModels(
  defaults: readonly ModelEntry[],
  seedreamModel: string,
  videoModel: string,
  azureImageModel = AZURE_IMAGE_DEPLOYMENT,
  vendorModel: (name: VendorModelName) => string = (name) => VENDOR_MODELS[name].model,
): ModelEntry[] {
  const families = defaults.filter((entry) => entry.id.startsWith('x-image-'));
  const row = (vendorModel: string, id: string): ModelEntry => {
    const found = modelEntry(vendorModel);
    if (!found) throw new Error(`No catalogue row covers ${vendorModel}: add one with the models option (docs/models.md)`);
    return { ...found, id };
  };
  const [first, ...others] = families;
  return [
    first!,
    { ...first!, id: 'x-image-2.0-pro' },
    ...others,
    row(seedreamModel, SEEDREAM_MODEL),
    row(azureImageModel, AZURE_IMAGE_MODEL),
    row(vendorModel('x-gemini-image'), 'x-gemini-image'),
    row(vendorModel('x-flux'), 'x-flux'),
    row(vendorModel('x-flux-schnell'), 'x-flux-schnell'),
    row(videoModel, VIDEO_MODEL),
    row(vendorModel('x-veo'), 'x-veo'),
    row(vendorModel('x-kling'), 'x-kling'),
    row(vendorModel('x-kling-replicate'), 'x-kling-replicate'),
    {
      id: CHAT_MODEL,
      owned_by: 'openai',
      provider: 'openai',
      endpoints: { '/v1/chat/completions': 'passthrough', '/v1/responses': 'passthrough' },
      supported_parameters: ['model', 'messages', 'input', 'stream', 'stream_options', 'temperature', 'max_tokens', 'tools'],
      streams: true,
    },
    ...defaults.filter((entry) => !entry.id.startsWith('x-image-')),
  ];
}

/** True for 127.0.0.0/8, ::1 and `localhost`: the only binds where local callbacks stay local. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** The variables that make the example spend a real vendor account. */
export const REAL_VENDOR_VARIABLES: readonly string[] = [
  'DASHSCOPE_API_KEY',
  'ARK_API_KEY',
  'VOLCENGINE_ACCESS_KEY_ID',
  'OPENAI_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'FAL_KEY',
  'REPLICATE_API_TOKEN',
];
export const DEFAULT_DEMO_KEY = 'sk-demo-local-only';

/** Which caller key the example accepts and whether its page hands it out, or why it must not start. */
export interface DemoKeyPolicy {
  key: string;
  fillIn: boolean;
  warnings: string[];
  /** Set when the example must not start: the reason and what to set. */
  refusal?: string;
}

/**
 * The example's key rule: on loopback the demo key is filled into the playground. Beyond loopback the
 * page is served to whoever reaches the address; with a real vendor key set, a filled-in key would
 * spend that vendor account for every visitor, so the example refuses to start without an explicit
 * GATEWAY_DEMO_KEY, and never fills that one in (contract §5.4: keys stay off pages).
 */
export function demoKeyPolicy(host: string, env: Readonly<Record<string, string | undefined>>): DemoKeyPolicy {
  const explicit = env.GATEWAY_DEMO_KEY || undefined;
  const key = explicit ?? DEFAULT_DEMO_KEY;
  if (isLoopbackHost(host)) return { key, fillIn: true, warnings: [] };
  const real = REAL_VENDOR_VARIABLES.filter((name) => Boolean(env[name]));
  if (real.length === 0) {
    return {
      key,
      fillIn: true,
      warnings: [`warning: HOST=${host} is beyond loopback: anyone who reaches it gets the key ${key} from the playground (every upstream is simulated, so nothing is spent)`],
    };
  }
  if (!explicit) {
    return {
      key,
      fillIn: false,
      warnings: [],
      refusal: `HOST=${host} is beyond loopback and ${real.join(', ')} ${real.length === 1 ? 'is' : 'are'} set: the playground would hand every visitor a key that spends that vendor account. Set GATEWAY_DEMO_KEY to a secret key of your own (it is not filled in), or listen on HOST=127.0.0.1.`,
    };
  }
  return {
    key,
    fillIn: false,
    warnings: [
      `warning: HOST=${host} is beyond loopback with ${real.join(', ')} set: GATEWAY_DEMO_KEY spends that vendor account; the playground does not fill it in, give it only to people you trust`,
    ],
  };
}

/** The example's `[usage]` line: caller text (the model name) is JSON-quoted, so no value can start a line of its own. */
export function usageLine(event: UsageEvent): string {
  const stored = event.storedBytes !== undefined ? ` storedBytes=${event.storedBytes}` : '';
  const cost = event.cost ? ` cost=${event.cost.amount} ${event.cost.currency}` : '';
  const task = event.task ? ` task=${event.task.id} ${event.task.status}` : '';
  // the books (docs/tenancy-and-billing.md "The books"): what the vendors may bill, and what the tenant did not pay for
  const vendor = event.vendorWork ? ` vendorImages=${event.vendorWork.images}` : '';
  const lost = event.undeliveredImages ? ` undelivered=${event.undeliveredImages}` : '';
  const absorbed = event.absorbedImages ? ` absorbed=${event.absorbedImages}` : '';
  const kept = event.keptImages ? ` kept=${event.keptImages}` : '';
  const why = event.lostBy ? ` lostBy=${event.lostBy}` : '';
  return `[usage] caller=${JSON.stringify(String(event.caller.id))} route=${event.route} model=${JSON.stringify(event.model)} status=${event.status} latencyMs=${Math.round(event.latencyMs)} images=${event.images}${vendor}${lost}${absorbed}${kept}${why}${stored}${cost}${task}`;
}

export async function createExampleApp(options: ExampleAppOptions = {}): Promise<ExampleApp> {
  const env = options.env ?? process.env;
  const host = options.host ?? (env.HOST || '127.0.0.1');
  const policy = demoKeyPolicy(host, env);
  if (policy.refusal) throw new Error(policy.refusal);
  const demoKey = policy.key;
  const localCallbacks = isLoopbackHost(host);
  const closers: Array<() => Promise<void>> = [];

  // DashScope: an explicit base (tests), the real one with a key, else a simulation
  const dashscopeKey = options.dashscopeApiKey ?? env.DASHSCOPE_API_KEY;
  let dashscope: { baseURL: string; apiKey: string; simulated: boolean; real: boolean };
  if (options.dashscopeBaseURL) dashscope = { baseURL: options.dashscopeBaseURL, apiKey: dashscopeKey ?? SIMULATED_KEY, simulated: false, real: false };
  else if (dashscopeKey) dashscope = { baseURL: env.DASHSCOPE_BASE_URL || DASHSCOPE_INTL_BASE_URL, apiKey: dashscopeKey, simulated: false, real: true };
  else {
    const simulation = await startSimulatedDashscope();
    closers.push(() => simulation.close());
    dashscope = { baseURL: simulation.baseURL, apiKey: SIMULATED_KEY, simulated: true, real: false };
  }
  // with DashScope simulated, `x-image-2.0` has a flapping upstream and a blocked account before it, so
  // the log shows traffic moving (docs/routing-and-health.md); the caller is always answered
  const routing = dashscope.simulated ? await startRoutingSimulations(dashscope.baseURL, options.routingTiming) : undefined;
  if (routing) closers.push(() => routing.close());
  const routingNames = new Map<string, string>(
    routing
      ? [
          [routing.flapping.baseURL, 'flapping DashScope'],
          [routing.blocked.baseURL, 'blocked DashScope account'],
          [dashscope.baseURL, 'DashScope'],
        ]
      : [],
  );

  // Volcengine asset library (AK/SK) first: the simulated Ark accepts only the assets it created
  let volcengine: { baseURL: string; accessKeyId: string; secretAccessKey: string; region: string; simulated: boolean };
  let knowsAsset: ((id: string) => boolean) | undefined;
  if (env.VOLCENGINE_ACCESS_KEY_ID && env.VOLCENGINE_SECRET_ACCESS_KEY) {
    volcengine = {
      baseURL: env.VOLCENGINE_OPENAPI_URL || VOLCENGINE_OPENAPI_URL,
      accessKeyId: env.VOLCENGINE_ACCESS_KEY_ID,
      secretAccessKey: env.VOLCENGINE_SECRET_ACCESS_KEY,
      region: env.VOLCENGINE_REGION || 'cn-beijing',
      simulated: false,
    };
  } else {
    const simulation = await startSimulatedVolcengine({ accessKeyId: SIMULATED_AK, secretAccessKey: SIMULATED_SK });
    closers.push(() => simulation.close());
    knowsAsset = (id) => simulation.hasAsset(id);
    volcengine = { baseURL: simulation.baseURL, accessKeyId: SIMULATED_AK, secretAccessKey: SIMULATED_SK, region: 'cn-beijing', simulated: true };
  }

  let ark: { baseURL: string; apiKey: string; simulated: boolean };
  if (env.ARK_API_KEY) ark = { baseURL: env.ARK_BASE_URL || ARK_BASE_URL, apiKey: env.ARK_API_KEY, simulated: false };
  else {
    const simulation = await startSimulatedArk({ ...options.arkTiming, knowsAsset });
    closers.push(() => simulation.close());
    ark = { baseURL: simulation.baseURL, apiKey: SIMULATED_KEY, simulated: true };
  }

  let openai: { baseURL: string; apiKey: string; simulated: boolean };
  if (env.OPENAI_API_KEY) openai = { baseURL: env.OPENAI_BASE_URL || OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, simulated: false };
  else {
    const simulation = await startSimulatedLlm();
    closers.push(() => simulation.close());
    openai = { baseURL: simulation.baseURL, apiKey: SIMULATED_KEY, simulated: true };
  }

  // Azure OpenAI: the resource endpoint and its key (the openai SDK's AzureOpenAI variables), else a simulation
  let azure: { endpoint: string; apiKey: string; simulated: boolean };
  if (env.AZURE_OPENAI_API_KEY && env.AZURE_OPENAI_ENDPOINT) azure = { endpoint: env.AZURE_OPENAI_ENDPOINT, apiKey: env.AZURE_OPENAI_API_KEY, simulated: false };
  else {
    const simulation = await startSimulatedAzure();
    closers.push(() => simulation.close());
    azure = { endpoint: simulation.endpoint, apiKey: SIMULATED_KEY, simulated: true };
  }
  const azureDeployment = env.AZURE_OPENAI_IMAGE_DEPLOYMENT || AZURE_IMAGE_DEPLOYMENT;

  // the Gemini API (images and Veo), fal's queue and Replicate: each real with its SDK's key variable, else simulated
  let gemini: { baseURL: string; apiKey: string; simulated: boolean };
  if (env.GEMINI_API_KEY) gemini = { baseURL: env.GEMINI_BASE_URL || GEMINI_BASE_URL, apiKey: env.GEMINI_API_KEY, simulated: false };
  else {
    const simulation = await startSimulatedGemini();
    closers.push(() => simulation.close());
    gemini = { baseURL: simulation.baseURL, apiKey: SIMULATED_GEMINI_KEY, simulated: true };
  }
  let fal: { baseURL: string; apiKey: string; simulated: boolean };
  if (env.FAL_KEY) fal = { baseURL: env.FAL_BASE_URL || FAL_BASE_URL, apiKey: env.FAL_KEY, simulated: false };
  else {
    const simulation = await startSimulatedFal();
    closers.push(() => simulation.close());
    fal = { baseURL: simulation.baseURL, apiKey: SIMULATED_KEY, simulated: true };
  }
  let replicate: { baseURL: string; apiKey: string; simulated: boolean };
  if (env.REPLICATE_API_TOKEN) replicate = { baseURL: env.REPLICATE_BASE_URL || REPLICATE_BASE_URL, apiKey: env.REPLICATE_API_TOKEN, simulated: false };
  else {
    const simulation = await startSimulatedReplicate();
    closers.push(() => simulation.close());
    replicate = { baseURL: simulation.baseURL, apiKey: SIMULATED_KEY, simulated: true };
  }
  const vendors = { gemini, fal, replicate };
  const vendorModel = (name: VendorModelName): string => env[VENDOR_MODELS[name].variable] || VENDOR_MODELS[name].model;
  /** The upstream of a newer vendor's caller-facing name on its route, or undefined. */
  const vendorUpstream = (model: string, route: 'images' | 'video'): Upstream | undefined => {
    if (!Object.hasOwn(VENDOR_MODELS, model)) return undefined;
    const entry = VENDOR_MODELS[model as VendorModelName];
    if (entry.route !== route) return undefined;
    const vendor = vendors[entry.vendor];
    return { provider: entry.vendor, baseURL: vendor.baseURL, apiKey: vendor.apiKey, model: vendorModel(model as VendorModelName) };
  };

  const videoModel = env.ARK_VIDEO_MODEL || 'doubao-seedance-1-0-pro-250528';
  const seedreamModel = env.ARK_IMAGE_MODEL || 'doubao-seedream-4-0-250828';
  const chatModel = openai.simulated ? CHAT_MODEL : env.OPENAI_MODEL || 'gpt-4o-mini';
  // the catalogue (docs/models.md): each caller-facing name with the rules of the model behind it, so
  // GET /v1/models describes exactly what works; only what the resolver below routes is listed
  const models = (defaults: readonly ModelEntry[]): ModelEntry[] => exampleModels(defaults, seedreamModel, videoModel, azureDeployment, vendorModel);
  // content safety (docs/content-safety.md): the real moderation API with OPENAI_API_KEY, else a simulated one
  // whose word list and "mostly pure red image" rule a newcomer can trigger from the playground
  let moderationInfo: UpstreamInfo;
  let moderationCheck: ReturnType<typeof openAIModeration>;
  if (env.OPENAI_API_KEY) {
    const baseURL = env.OPENAI_BASE_URL || OPENAI_BASE_URL;
    moderationCheck = openAIModeration({ apiKey: env.OPENAI_API_KEY, baseURL });
    moderationInfo = { simulated: false, baseURL, keyVariables: 'OPENAI_API_KEY' };
  } else {
    const simulation = await startSimulatedModeration();
    closers.push(() => simulation.close());
    moderationCheck = openAIModeration({ apiKey: SIMULATED_KEY, baseURL: simulation.baseURL });
    moderationInfo = { simulated: true, baseURL: simulation.baseURL, keyVariables: 'OPENAI_API_KEY' };
  }

  const signingSecret = env.GATEWAY_WEBHOOK_SECRET || `whsec_${randomBytes(24).toString('base64')}`;
  const callbacks = createCallbackReceiver(signingSecret);

  // durable results (docs/durable-results.md): every result is copied into files on this machine and
  // answered as a signed URL of this app, valid 24 h, long after the upstream's own link has died
  // (the simulations' links die after one download). RESULTS_SECRET keeps URLs valid across restarts.
  const resultsDirectory = env.RESULTS_DIR || path.join(os.tmpdir(), 'express-image-gateway-example-results');
  const storage = localResultStorage({
    directory: resultsDirectory,
    secret: env.RESULTS_SECRET || randomBytes(32).toString('hex'),
    retentionMs: 7 * 24 * 3600_000,
    ...(env.PUBLIC_BASE_URL ? { publicBaseUrl: env.PUBLIC_BASE_URL } : {}),
  });

  // Content Credentials (docs/provenance.md): the example's own CA, made in memory at each start, issues
  // the certificate every image is signed with, and is the one trust anchor: the reports say
  // `trusted: true` for the example's own images
  const signer = options.provenance === true ? makeExampleSigner() : undefined;
  const provenance = signer && {
    trustAnchors: signer.caPem,
    // signing needs result storage: without it a url answer would hand out the vendor's unsigned file
    ...(options.storage === false ? {} : { sign: { certificate: signer.chainPem, privateKey: signer.privateKey, algorithm: 'es256' as const } }),
  };

  const gateway = createGatewayRouter({
    ...(options.storage === false ? {} : { storage }),
    ...(provenance ? { provenance } : {}),
    verifyKey: staticKeys({ [demoKey]: { id: 'demo-tenant' } }),
    resolveUpstream: ({ model, route }): Upstream | Upstream[] | null => {
      switch (route) {
        case 'images.generations':
        case 'images.edits': {
          // Seedream answers the OpenAI image routes too, in either request shape (docs/models.md)
          if (model === SEEDREAM_MODEL) return { provider: 'ark', baseURL: ark.baseURL, apiKey: ark.apiKey, model: seedreamModel };
          // the v1 URL form (no apiVersion); the deployment is the model (docs/providers/azure.md)
          if (model === AZURE_IMAGE_MODEL) return { provider: 'azure', baseURL: azure.endpoint, apiKey: azure.apiKey, model: azureDeployment };
          const vendor = vendorUpstream(model, 'images');
          if (vendor) return vendor;
          const upstreamModel = dashscopeModelFor(model);
          if (!upstreamModel) return null;
          const main: Upstream = { provider: 'dashscope', baseURL: dashscope.baseURL, apiKey: dashscope.apiKey, model: upstreamModel };
          // tried in order; an open one is skipped until its cooldown ends (docs/routing-and-health.md)
          if (routing && model === 'x-image-2.0') return [{ ...main, baseURL: routing.flapping.baseURL }, { ...main, baseURL: routing.blocked.baseURL }, main];
          return main;
        }
        case 'chat.completions':
        case 'responses':
          return model === CHAT_MODEL ? { provider: 'openai', baseURL: openai.baseURL, apiKey: openai.apiKey, model: chatModel } : null;
        case 'video.tasks':
          return model === VIDEO_MODEL ? { provider: 'ark', baseURL: ark.baseURL, apiKey: ark.apiKey, model: videoModel } : (vendorUpstream(model, 'video') ?? null);
        case 'images.native':
          return model === SEEDREAM_MODEL ? { provider: 'ark', baseURL: ark.baseURL, apiKey: ark.apiKey, model: seedreamModel } : null;
        case 'assets':
          // the model of route 'assets' is the AssetType; Volcengine's OpenAPI is AK/SK-signed
          return { provider: 'ark', baseURL: volcengine.baseURL, accessKeyId: volcengine.accessKeyId, secretAccessKey: volcengine.secretAccessKey, region: volcengine.region };
        default:
          return null;
      }
    },
    models: { catalogue: models },
    tenancy: { pricing: EXAMPLE_PRICING },
    // prompts and input images checked before any paid call; a flagged one is a 400 that names its categories
    // the simulations draw edits from their image URLs without fetching them, and the docs' samples link
    // images on hosts that do not exist: with 'allow', what the gateway cannot fetch goes on unchecked
    // (an event says so); a production policy keeps the default 'refuse'
    moderation: { check: moderationCheck, onCheckerError: 'allow' },
    // the simulations serve their results on loopback, which the gateway refuses to download for
    // b64_json by default; with every vendor that answers URLs real, the result hosts are public and this stays off
    allow: { privateResultUrls: !dashscope.real || ark.simulated || fal.simulated || replicate.simulated },
    callbacks: {
      signingSecret,
      // the video example of docs/video-tasks-and-callbacks.md calls back this app's own receiver on loopback; bound elsewhere,
      // the gateway must not be a way into the machine's private network
      allowLocal: localCallbacks,
      // the simulated Ark finishes in seconds; a real one is polled on the gateway's default schedule
      ...(ark.simulated ? { pollIntervalsMs: { video: [1000] } } : {}),
    },
    // metering, the way a SaaS host would bill per tenant; keys never reach this line
    onUsage: (event) => console.log(usageLine(event)),
    // each upstream state change: traffic leaving the flapping and blocked upstreams, and coming back
    onUpstreamHealth: (event) =>
      console.log(`routing: ${routingNames.get(event.upstream.baseURL) ?? event.upstream.baseURL} is ${event.state}${event.caller !== undefined ? ` for ${event.caller}` : ''} (${event.reason})`),
    // the gateway never hands its logger a key; info stays quiet to keep the console readable
    logger: { warn: (fields, message) => console.warn(`warn: ${message}`, fields), error: (fields, message) => console.error(`error: ${message}`, fields) },
  });
  closers.unshift(() => gateway.close());

  const app = express();
  app.disable('x-powered-by');
  // the playground: one page that uses only the gateway's public API, the demo key filled in
  app.use(
    createPlayground({
      ...(policy.fillIn ? { defaultKey: demoKey } : {}),
      models: { image: 'x-image-2.0', edit: 'x-image-edit', video: VIDEO_MODEL },
      // contract §8 polling, shortened for a simulated Ark whose tasks end within seconds
      ...(ark.simulated ? { pollIntervalsMs: [2000, 1500, 1000] } : {}),
    }),
  );
  // the host app's own routes: the gateway answers only its own paths
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'This host app serves the image gateway at its root.', gateway: { openai_base_url: '/v1', playground: '/', models: EXAMPLE_MODEL_NAMES } });
  });
  app.use(callbacks.router);
  app.use(gateway);

  const upstreams: Record<Vendor, UpstreamInfo> = {
    dashscope: { simulated: dashscope.simulated, baseURL: dashscope.baseURL, keyVariables: 'DASHSCOPE_API_KEY' },
    ark: { simulated: ark.simulated, baseURL: ark.baseURL, keyVariables: 'ARK_API_KEY' },
    volcengine: { simulated: volcengine.simulated, baseURL: volcengine.baseURL, keyVariables: 'VOLCENGINE_ACCESS_KEY_ID and VOLCENGINE_SECRET_ACCESS_KEY' },
    openai: { simulated: openai.simulated, baseURL: openai.baseURL, keyVariables: 'OPENAI_API_KEY' },
    azure: { simulated: azure.simulated, baseURL: azure.endpoint, keyVariables: 'AZURE_OPENAI_API_KEY and AZURE_OPENAI_ENDPOINT' },
    gemini: { simulated: gemini.simulated, baseURL: gemini.baseURL, keyVariables: 'GEMINI_API_KEY' },
    fal: { simulated: fal.simulated, baseURL: fal.baseURL, keyVariables: 'FAL_KEY' },
    replicate: { simulated: replicate.simulated, baseURL: replicate.baseURL, keyVariables: 'REPLICATE_API_TOKEN' },
  };

  let closed = false;
  return {
    app,
    demoKey,
    keyFilledIn: policy.fillIn,
    warnings: policy.warnings,
    upstreamBaseURL: dashscope.baseURL,
    simulated: dashscope.simulated,
    upstreams,
    moderation: moderationInfo,
    provenance: signer !== undefined,
    callbacks,
    localCallbacks,
    resultsDirectory,
    close: async () => {
      if (closed) return;
      closed = true;
      for (const close of closers) await close();
    },
  };
}

const VENDOR_NAMES: Readonly<Record<Vendor, string>> = {
  dashscope: 'DashScope (x-image-*)',
  ark: 'Ark (x-video, x-seedream)',
  volcengine: 'Volcengine assets (CreateAsset)',
  openai: 'OpenAI-compatible (x-chat)',
  azure: 'Azure OpenAI (x-gpt-image)',
  gemini: 'Gemini API (x-gemini-image, x-veo)',
  fal: 'fal.ai (x-flux, x-kling)',
  replicate: 'Replicate (x-flux-schnell, x-kling-replicate)',
};

/** The startup lines: where it listens, and for each vendor whether it is simulated and how to switch. */
export function startupLines(example: ExampleApp, base: string): string[] {
  const lines = [
    `Image gateway example on ${base}  (playground: ${base}/ , OpenAI base URL: ${base}/v1)`,
    example.keyFilledIn ? `Demo key (local use only): ${example.demoKey}` : 'Caller key: GATEWAY_DEMO_KEY (not shown, not filled in)',
    ...example.warnings,
  ];
  const simulated = (Object.keys(example.upstreams) as Vendor[]).filter((vendor) => example.upstreams[vendor].simulated);
  lines.push(`Simulated upstreams: ${simulated.length > 0 ? simulated.map((vendor) => VENDOR_NAMES[vendor]).join(', ') : 'none'}`);
  for (const vendor of Object.keys(example.upstreams) as Vendor[]) {
    const info = example.upstreams[vendor];
    if (info.simulated) lines.push(`warning: ${info.keyVariables} unset: ${VENDOR_NAMES[vendor]} is simulated on ${info.baseURL}; set it to use the real vendor`);
    else lines.push(`${VENDOR_NAMES[vendor]}: real vendor at ${info.baseURL}`);
  }
  lines.push(
    example.moderation.simulated
      ? `Content safety: a simulated moderation service on ${example.moderation.baseURL} flags prompts with "massacre", "kill", "gore", "counterfeit" or "hateful", and images that are mostly pure red; set OPENAI_API_KEY to use the real one`
      : `Content safety: the moderation API at ${example.moderation.baseURL}`,
  );
  if (!example.localCallbacks) lines.push('Callbacks to loopback and private hosts are off (HOST is not a loopback address): use an https callback_url.');
  lines.push(`Callback receiver: ${base}${example.callbacks.path} (prints each delivery whose signature it verified)`);
  if (example.provenance) lines.push('Content Credentials: every image is signed with a CA made at this start and reported (data[i].provenance: c2pa, signer, trusted)');
  lines.push(`Durable results: stored in ${example.resultsDirectory}, answered as signed ${base}/v1/results/... URLs (24 h); the simulated upstreams' own result links expire after one download`);
  return lines;
}

/** Copy-paste material for the console; docs/routes.md has a command for every route. */
function usageText(base: string, key: string): string {
  // a variable's name is left for the shell to expand (double quotes)
  const auth = key.startsWith('$') ? `-H "Authorization: Bearer ${key}"` : `-H 'Authorization: Bearer ${key}'`;
  return [
    '# text-to-image',
    `curl -s ${base}/v1/images/generations ${auth} -H 'Content-Type: application/json' \\`,
    `  -d '{"model":"x-image-2.0","prompt":"unused: input.messages holds the prompt","input":{"messages":[{"role":"user","content":[{"text":"A lighthouse at dawn, watercolour"}]}]},"parameters":{"size":"1024*1024","n":1}}'`,
    '# chat, streamed',
    `curl -sN ${base}/v1/chat/completions ${auth} -H 'Content-Type: application/json' -d '{"model":"x-chat","stream":true,"messages":[{"role":"user","content":"Hello"}]}'`,
    '# the models this key may use',
    `curl -s ${base}/v1/models ${auth}`,
    '',
    'A command for every route: docs/routes.md. Stop with Ctrl+C.',
  ].join('\n');
}

async function main(): Promise<void> {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(process.env.PORT)}.`);
    process.exit(1);
  }
  const example = await createExampleApp({ host, provenance: true });
  const server: Server = example.app.listen(port, host);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // one clear line, not a stack: the usual cause is a second `npm start`
    if (code === 'EADDRINUSE') console.error(`Port ${port} on ${host} is already in use. Stop the other server, or pick another port: PORT=${port + 1} npm start`);
    else if (code === 'EACCES') console.error(`No permission to listen on port ${port}: pick a port above 1023, e.g. PORT=3000 npm start`);
    else if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') console.error(`HOST=${host} is not an address of this machine: use 127.0.0.1 (the default) or 0.0.0.0`);
    else console.error(`Could not listen on ${host}:${port}: ${(error as Error).message}`);
    await example.close();
    process.exit(1);
  }
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const base = `http://${shown}:${(server.address() as { port: number }).port}`;
  for (const line of startupLines(example, base)) console.log(line);
  console.log(`\n${usageText(base, example.keyFilledIn ? example.demoKey : '$GATEWAY_DEMO_KEY')}`);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing`);
    // stop accepting, let requests in flight finish (at most 5 s), then close the gateway and the simulations
    const force = setTimeout(() => server.closeAllConnections(), 5_000).unref();
    server.close(() => {
      clearTimeout(force);
      example.close().then(
        () => {
          console.log('closed');
          process.exit(0);
        },
        (error: unknown) => {
          console.error(error instanceof Error ? error.message : error);
          process.exit(1);
        },
      );
    });
    server.closeIdleConnections();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// listen only when run directly (`tsx examples/server.ts`), never when imported by the specs
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
