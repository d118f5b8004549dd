// The `callbacks` option resolved (docs/configuration.md "callbacks"): defaults, checks with a fix, the
// host lists of the temporary-proxy rule (contract §6.3), and the one polling schedule of every kind of
// task, frozen for the task service to read.
import { Webhook } from 'standardwebhooks';
import { GatewayConfigError } from '../../errors/config-error.js';
import type { CallbackOptions, TaskPollIntervals } from '../../options/gateway-options.js';

export interface ResolvedCallbacks {
  readonly signingSecret?: string;
  readonly maxAttempts: number;
  readonly allowLocal: boolean;
  readonly timeoutMs: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** Per kind of task, the delays between reads of its upstream, ms; the last one repeats (tasks/task-keys.ts `pollDelayOf`). */
  readonly pollIntervalsMs: Readonly<Required<Record<keyof TaskPollIntervals, readonly number[]>>>;
  readonly maxFollowMs: number;
  /** Operator additions to the temporary-proxy host list, normalized (lower case, no trailing dot). */
  readonly blockedHosts: readonly string[];
  /** Hosts exempt from the temporary-proxy list, normalized. */
  readonly allowedHosts: readonly string[];
}

const DEFAULT_CALLBACKS: Readonly<Omit<ResolvedCallbacks, 'signingSecret'>> = Object.freeze({
  maxAttempts: 8,
  allowLocal: false,
  timeoutMs: 10_000,
  retryBaseMs: 2_000,
  retryMaxMs: 300_000,
  // video: late first, then gently (contract §8); image: a vendor's image task ends in seconds
  pollIntervalsMs: Object.freeze({ video: Object.freeze([60_000, 45_000, 30_000, 20_000, 15_000]), image: Object.freeze([5_000]) }),
  maxFollowMs: 48 * 3600_000,
  blockedHosts: Object.freeze([]),
  allowedHosts: Object.freeze([]),
  // the names of the `callbacks` object (signingSecret and the scheduler, resolved apart, aside) come from
  // here: tsc checks them against CallbackOptions
} satisfies Record<Exclude<keyof CallbackOptions, 'signingSecret' | 'scheduler'>, unknown>);

export function resolveCallbacks(callbacks: CallbackOptions | undefined): ResolvedCallbacks {
  if (callbacks === undefined) return DEFAULT_CALLBACKS;
  const example = "callbacks: { signingSecret: 'whsec_…', maxAttempts: 8, pollIntervalsMs: { video: [60000, 30000, 15000] } }";
  if (callbacks === null || typeof callbacks !== 'object') throw new GatewayConfigError('callbacks_type', 'options.callbacks must be an object.', example);
  const known = new Set(['signingSecret', 'scheduler', ...Object.keys(DEFAULT_CALLBACKS)]);
  for (const key of Object.keys(callbacks)) {
    if (!known.has(key)) throw new GatewayConfigError('callbacks_unknown', `Unknown callbacks option '${key}'.`, `use only: ${[...known].join(', ')}.`);
  }
  const resolved: { -readonly [K in keyof ResolvedCallbacks]: ResolvedCallbacks[K] } = { ...DEFAULT_CALLBACKS };
  for (const key of ['maxAttempts', 'timeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxFollowMs'] as const) {
    const value = callbacks[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value <= 0) throw new GatewayConfigError('callbacks_value', `callbacks.${key} must be a positive integer.`, example);
    resolved[key] = value;
  }
  if (callbacks.allowLocal !== undefined) {
    if (typeof callbacks.allowLocal !== 'boolean')
      throw new GatewayConfigError('callbacks_value', 'callbacks.allowLocal must be a boolean.', 'callbacks: { allowLocal: true } (development and tests only)');
    resolved.allowLocal = callbacks.allowLocal;
  }
  if (callbacks.pollIntervalsMs !== undefined) resolved.pollIntervalsMs = resolvePollIntervals(callbacks.pollIntervalsMs);
  for (const key of ['blockedHosts', 'allowedHosts'] as const) {
    if (callbacks[key] !== undefined) resolved[key] = resolveHostList(callbacks[key], key);
  }
  if (callbacks.signingSecret !== undefined) {
    try {
      // standardwebhooks decodes the secret here; a bad one fails now rather than at the first delivery
      new Webhook(callbacks.signingSecret);
    } catch {
      throw new GatewayConfigError('callbacks_secret', 'callbacks.signingSecret is not a Standard Webhooks secret.', "signingSecret: 'whsec_' + crypto.randomBytes(24).toString('base64')");
    }
    resolved.signingSecret = callbacks.signingSecret;
  }
  return Object.freeze(resolved);
}

const POLL_KINDS = ['video', 'image'] as const satisfies ReadonlyArray<keyof TaskPollIntervals>;

/**
 * `callbacks.pollIntervalsMs`: one list per kind of task, for the kinds given; the others keep their
 * defaults. A bare list is refused with the per-kind form: one schedule cannot serve both kinds (a video
 * is read after a minute, an image task's vendor answers within seconds).
 */
function resolvePollIntervals(value: unknown): ResolvedCallbacks['pollIntervalsMs'] {
  const example = 'callbacks: { pollIntervalsMs: { video: [60000, 30000, 15000], image: [5000] } }';
  if (Array.isArray(value)) {
    throw new GatewayConfigError('callbacks_value', 'callbacks.pollIntervalsMs is one list per kind of task: { video?: [...], image?: [...] } (ms).', example);
  }
  if (value === null || typeof value !== 'object') throw new GatewayConfigError('callbacks_value', 'callbacks.pollIntervalsMs must be an object of lists by kind of task.', example);
  const given = value as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(POLL_KINDS as readonly string[]).includes(key)) {
      throw new GatewayConfigError('callbacks_unknown', `Unknown callbacks.pollIntervalsMs kind '${key}'.`, `use only: ${POLL_KINDS.join(', ')}.`);
    }
  }
  const resolved = { ...DEFAULT_CALLBACKS.pollIntervalsMs };
  for (const kind of POLL_KINDS) {
    const intervals = given[kind];
    if (intervals === undefined) continue;
    if (!Array.isArray(intervals) || intervals.length === 0 || intervals.some((ms) => !Number.isSafeInteger(ms) || (ms as number) <= 0)) {
      throw new GatewayConfigError('callbacks_value', `callbacks.pollIntervalsMs.${kind} must be a non-empty list of positive integers (ms).`, example);
    }
    resolved[kind] = Object.freeze([...(intervals as number[])]);
  }
  return Object.freeze(resolved);
}

/**
 * A list of callback host names (contract §6.3 proxy list additions or exemptions), each matching itself
 * and its subdomains. Bare names only: a scheme, port, path or wildcard would silently match nothing.
 */
function resolveHostList(value: unknown, key: 'blockedHosts' | 'allowedHosts'): readonly string[] {
  const example =
    key === 'blockedHosts'
      ? "callbacks: { blockedHosts: ['hooks.example-tunnel.net'] } (covers its subdomains too)"
      : "callbacks: { allowedHosts: ['acme.ngrok.app'] } (your own reserved tunnel domain)";
  if (!Array.isArray(value)) throw new GatewayConfigError('callbacks_value', `callbacks.${key} must be a list of host names.`, example);
  return Object.freeze(
    value.map((entry: unknown) => {
      let host: string | undefined;
      if (typeof entry === 'string' && /^[^\s/:@?#*\\[\]]+$/.test(entry)) {
        try {
          // WHATWG parsing gives the form a callback URL's host will have (lower case, punycode)
          host = new URL(`https://${entry}/`).hostname.replace(/\.$/, '');
        } catch {
          host = undefined;
        }
      }
      if (!host || !host.includes('.')) {
        throw new GatewayConfigError(
          'callbacks_value',
          `callbacks.${key} entries must be bare host names like 'hooks.example.net' (no scheme, port, path or '*'), got ${JSON.stringify(entry)}.`,
          example,
        );
      }
      return host;
    }),
  );
}
