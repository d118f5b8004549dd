// A vendor's call to the gateway's webhook route (docs/video-tasks-and-callbacks.md "Vendor webhooks"):
// the token first (no store read, no write: a flood of forged calls costs nothing but the HMAC), then
// the task read, its upstream resolved again (keys are never stored), and the vendor's own signature
// where the vendor signs. A call that passes is only a hint: the task is then read from the vendor by
// the same job a poll runs (the task service's `watch`), which moves it by compare-and-set, so a call
// and a poll racing move it once. The standing polls stay, slower, as the fallback.
import { clock } from '../../clock.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import type { CallContext } from '../../providers/call-context.js';
import type { VendorWebhookCall, VendorWebhookKeys } from '../../providers/provider.js';
import { capabilityOf, capabilityOfProvider, isProviderName } from '../../providers/registry.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { ResolvedVendorWebhooks } from '../options/vendor-webhook-option.js';
import { NEVER_ABORTED, messageOf } from '../tasks/background-work.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';
import type { TaskWatches } from '../tasks/task-jobs.js';
import { isTerminalStatus } from '../tasks/task-state-order.js';
import { resolveTaskUpstream } from '../tasks/task-upstream.js';
import { isVendorWebhookToken } from './vendor-webhook-urls.js';

/** What the route is told of one call: the task was hinted (or there was nothing to do), or the signature failed. */
export type VendorWebhookOutcome = 'accepted' | 'refused';

/** At most this many signing keys (one per upstream key, and fal's set) are kept. */
const MAX_KEYS = 1_000;

export class VendorWebhookCalls implements VendorWebhookKeys {
  readonly falJwksUrl: string;
  /** The task hinted now, per task id: a vendor's retries of one call read the vendor once. */
  private readonly running = new Map<string, Promise<void>>();
  /** Tasks called for again while they were read. */
  private readonly again = new Set<string>();
  private readonly keys = new Map<string, { value: Promise<unknown>; until: number }>();

  constructor(
    private readonly deps: GatewayDeps,
    private readonly webhooks: ResolvedVendorWebhooks,
    private readonly tasks: TaskWatches,
  ) {
    this.falJwksUrl = webhooks.falJwksUrl;
  }

  /** Whether the route's token is the one made for this task at this provider (constant time; nothing read). */
  admits(provider: string, taskId: string, token: string): boolean {
    return isProviderName(provider) && capabilityOfProvider(provider, 'webhooks') !== undefined && isVendorWebhookToken(this.webhooks.secret, taskId, provider, token);
  }

  /**
   * A call whose token was admitted: the vendor's signature checked where it signs, then the task read
   * from the vendor in the background. A task that is gone, ended, or of another provider is nothing to
   * do (accepted, so the vendor stops retrying). Throws a 503 when the vendor's keys cannot be read now.
   */
  async receive(provider: string, taskId: string, headers: VendorWebhookCall['headers'], body: Buffer): Promise<VendorWebhookOutcome> {
    const { options } = this.deps;
    const delivered: VendorWebhookCall = { headers, body, nowSeconds: Math.floor(clock().now() / 1000) };
    const record = await options.store.getTask(taskId);
    if (!record || record.upstream.provider !== provider || isTerminalStatus(record.status)) return 'accepted';
    const route = record.kind === 'video' ? 'video.tasks' : record.image.route;
    const upstream = await resolveTaskUpstream(options, record, route, callerOfTask(record), undefined);
    const webhooks = upstream && capabilityOf(upstream, 'webhooks');
    if (!upstream || !webhooks) {
      options.logger.warn({ taskId, provider }, 'vendor webhook for a task whose upstream the resolver no longer names; its polls go on');
      return 'accepted';
    }
    const call: CallContext = { http: this.deps.http, signal: NEVER_ABORTED, limits: options.limits };
    let verified: boolean;
    try {
      verified = await webhooks.verify(call, upstream, delivered, this);
    } catch (error) {
      options.logger.warn({ taskId, provider, error: messageOf(error) }, "vendor webhook not checked: the vendor's signing keys could not be read");
      throw new GatewayError({ status: 503, code: ERROR_CODES.vendorWebhookUnchecked, message: "The vendor's signing keys could not be read; the call was not checked. Retry later." });
    }
    if (!verified) return 'refused';
    this.hint(taskId);
    return 'accepted';
  }

  /** The value under `key`, loaded once and kept `ttlMs`; a failed load is forgotten at once. */
  remember<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const now = clock().now();
    const kept = this.keys.get(key);
    if (kept && kept.until > now) return kept.value as Promise<T>;
    if (this.keys.size >= MAX_KEYS) this.keys.clear();
    const value = load();
    this.keys.set(key, { value, until: now + ttlMs });
    value.catch(() => {
      if (this.keys.get(key)?.value === value) this.keys.delete(key);
    });
    return value;
  }

  /** The router closes: the reads under way end first. */
  async close(): Promise<void> {
    this.again.clear();
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /**
   * The poll's own job, now, detached from the vendor's request; what it says of the next poll is left
   * to the standing polls. A call that comes while the task is being read (Ark calls at each change of
   * status) reads it once more after, never twice at once.
   */
  private hint(taskId: string): void {
    if (this.running.has(taskId)) {
      this.again.add(taskId);
      return;
    }
    const run = this.deps.options.telemetry
      .detached(() => this.tasks.watch(taskId))
      .then(
        () => undefined,
        // the task service logged it; the standing polls read the task again
        () => undefined,
      )
      .finally(() => {
        this.running.delete(taskId);
        if (this.again.delete(taskId)) this.hint(taskId);
      });
    this.running.set(taskId, run);
  }
}
