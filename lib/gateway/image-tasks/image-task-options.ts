// The `limits.imageTasks` option resolved once (docs/image-tasks.md, docs/configuration.md): every field
// checked as a positive whole number, defaults filled in, milliseconds where the code counts them.
import { GatewayConfigError } from '../../errors/config-error.js';
import type { ImageTaskOptions } from '../../options/gateway-options.js';
import { type LeaseTerms, leaseTerms } from '../leases/lease-terms.js';

export interface ResolvedImageTasks {
  keepMs: number;
  concurrency: number;
  perCallerConcurrency: number;
  maxQueued: number;
  maxQueuedPerCaller: number;
  maxQueueMs: number;
  maxWaitMs: number;
  upstreamUrlMs: number;
  /** The lease an instance holds on each task it queues or runs (leases/lease-terms.ts). */
  lease: LeaseTerms;
}

const NAMES = {
  keepSeconds: true,
  concurrency: true,
  perCallerConcurrency: true,
  maxQueued: true,
  maxQueuedPerCaller: true,
  maxQueueSeconds: true,
  maxWaitSeconds: true,
  upstreamUrlSeconds: true,
  leaseSeconds: true,
} as const satisfies Record<keyof ImageTaskOptions, true>;

export function resolveImageTasks(options: ImageTaskOptions | undefined): ResolvedImageTasks {
  const example = 'limits: { imageTasks: { concurrency: 16, keepSeconds: 3600 } }';
  if (options !== undefined && (options === null || typeof options !== 'object')) throw new GatewayConfigError('image_tasks_type', 'options.limits.imageTasks must be an object.', example);
  const given = options ?? {};
  for (const key of Object.keys(given)) {
    // the one polling schedule of every kind of task is callbacks.pollIntervalsMs (docs/configuration.md "Old names")
    if (key === 'pollSeconds') {
      throw new GatewayConfigError('option_moved', "Option 'limits.imageTasks.pollSeconds' is now callbacks.pollIntervalsMs.image (ms).", 'callbacks: { pollIntervalsMs: { image: [5000] } }');
    }
    if (!Object.hasOwn(NAMES, key)) throw new GatewayConfigError('image_tasks_unknown', `Unknown limits.imageTasks option '${key}'.`, `use only: ${Object.keys(NAMES).join(', ')}.`);
  }
  const read = (key: keyof ImageTaskOptions, fallback: number): number => {
    const value = given[key];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new GatewayConfigError('image_tasks_value', `limits.imageTasks.${key} must be a whole number >= 1, got ${String(value)}.`, example);
    }
    return value;
  };
  const concurrency = read('concurrency', 32);
  return {
    keepMs: read('keepSeconds', 86_400) * 1000,
    concurrency,
    perCallerConcurrency: Math.min(concurrency, read('perCallerConcurrency', Math.max(1, Math.floor(concurrency / 2)))),
    maxQueued: read('maxQueued', 10_000),
    maxQueuedPerCaller: read('maxQueuedPerCaller', 1_000),
    maxQueueMs: read('maxQueueSeconds', 600) * 1000,
    maxWaitMs: read('maxWaitSeconds', 60) * 1000,
    upstreamUrlMs: read('upstreamUrlSeconds', 3_600) * 1000,
    lease: leaseTerms(read('leaseSeconds', 30)),
  };
}
