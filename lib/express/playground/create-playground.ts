// createPlayground(options): an optional router that serves one self-contained page where a person
// pastes a key, picks a model, generates and edits images and watches a video task until it plays.
// It is separate from the gateway router on purpose: a host mounts it only where people should see
// it (a dev server, an admin path), and the page talks to the gateway only through its public API.
import { createHash } from 'node:crypto';
import express, { type Router } from 'express';
import { GatewayConfigError } from '../../errors/config-error.js';
import { type PlaygroundPageConfig, renderPlaygroundPage } from './playground-page.js';
import { PLAYGROUND_SCRIPT } from './playground-script.js';

export interface PlaygroundOptions {
  /**
   * Where the gateway is mounted, as the browser sees it: the page calls `${apiBase}/v1/...`.
   * Default `''` (the gateway at the root of the same origin).
   * @example apiBase: '/ai' // app.use('/ai', gateway)
   */
  apiBase?: string;
  /** The page title. Default `'Image gateway playground'`. */
  title?: string;
  /**
   * A key filled in for the user. Default none: the user pastes one. Only for local demo keys; a real
   * key in a page is a key given to everyone who can load it (contract §5.4).
   * @example defaultKey: 'sk-demo-local-only'
   */
  defaultKey?: string;
  /** Model names filled in per form. Default `x-image-2.0`, `x-image-edit`, `x-video`. */
  models?: Partial<PlaygroundPageConfig['models']>;
  /**
   * Delays between task queries of the video form, ms; the last repeats. Default
   * `[2 s, 3 s, 5 s, 10 s, 15 s]`: a person is watching, so the page
   * sees a task end within seconds, then queries less often (contract §8: no needless high-frequency
   * polling). At least 500 ms each.
   * @example pollIntervalsMs: [60_000, 30_000, 15_000] // query late, as the contract suggests for unattended clients
   */
  pollIntervalsMs?: readonly number[];
}

/** The video form's default query schedule: soon at first, a person is watching, then every 15 s. */
const PLAYGROUND_POLL_INTERVALS_MS: readonly number[] = Object.freeze([2_000, 3_000, 5_000, 10_000, 15_000]);

const DEFAULT_MODELS: PlaygroundPageConfig['models'] = Object.freeze({ image: 'x-image-2.0', edit: 'x-image-edit', video: 'x-video' });

export function createPlayground(options: PlaygroundOptions = {}): Router {
  const config = resolvePlaygroundOptions(options);
  const page = renderPlaygroundPage(config);
  // the inline script is allowed by its hash, so the page runs nothing else even if a value injected
  // into it were to contain markup
  const scriptHash = createHash('sha256').update(PLAYGROUND_SCRIPT, 'utf8').digest('base64');
  const apiOrigin = /^https?:\/\//i.test(config.apiBase) ? ` ${new URL(config.apiBase).origin}` : '';
  const policy = [
    "default-src 'none'",
    `script-src 'sha256-${scriptHash}'`,
    "style-src 'unsafe-inline'",
    // result images and videos live on the upstream's (or a CDN's) host, and picked files are blob: URLs
    'img-src * data: blob:',
    'media-src * blob:',
    `connect-src 'self'${apiOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

  const router = express.Router();
  router.get('/', (_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('content-security-policy', policy);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', 'no-store');
    res.end(page);
  });
  return router;
}

function resolvePlaygroundOptions(options: PlaygroundOptions): PlaygroundPageConfig {
  const example = "createPlayground({ apiBase: '/ai', defaultKey: 'sk-demo-local-only', pollIntervalsMs: [5000, 2000] })";
  if (options === null || typeof options !== 'object') throw new GatewayConfigError('playground_options', 'createPlayground options must be an object.', example);
  const apiBase = options.apiBase ?? '';
  if (typeof apiBase !== 'string' || (apiBase !== '' && !/^(\/|https?:\/\/)/i.test(apiBase))) {
    throw new GatewayConfigError('playground_api_base', "apiBase must be '' , a path starting with '/' or an http(s) URL.", example);
  }
  for (const name of ['title', 'defaultKey'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'string') throw new GatewayConfigError('playground_option_type', `${name} must be a string.`, example);
  }
  const intervals = options.pollIntervalsMs ?? PLAYGROUND_POLL_INTERVALS_MS;
  if (!Array.isArray(intervals) || intervals.length === 0 || intervals.some((ms) => !Number.isSafeInteger(ms) || ms < 500)) {
    // below half a second is the "needless high-frequency polling" contract §8 asks clients to avoid
    throw new GatewayConfigError('playground_poll_intervals', 'pollIntervalsMs must be a non-empty list of whole milliseconds, each at least 500.', example);
  }
  const models = { ...DEFAULT_MODELS };
  for (const [name, value] of Object.entries(options.models ?? {})) {
    if (!(name in DEFAULT_MODELS) || typeof value !== 'string')
      throw new GatewayConfigError('playground_models', 'models takes image, edit and video names (strings).', "models: { image: 'x-image-2.0', edit: 'x-image-edit', video: 'x-video' }");
    models[name as keyof typeof models] = value;
  }
  return {
    title: options.title ?? 'Image gateway playground',
    apiBase: apiBase.replace(/\/+$/, ''),
    defaultKey: options.defaultKey ?? '',
    models,
    pollIntervalsMs: [...(intervals as readonly number[])],
  };
}
