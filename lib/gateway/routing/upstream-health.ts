// The health of every upstream this instance has called (docs/routing-and-health.md): a breaker and a
// latency estimate per key (below), the order a list is tried in (choose-upstreams.ts), and
// the operator's signals when one changes state: onUpstreamHealth, a log line, a metric, and the
// shared store's message to the other instances. An upstream may also be closed to one caller alone,
// by that caller's own failures ("Whose failure"): every read below takes the caller's id. Requests read only this local map: no Redis round
// trip on the hot path (shared-health.ts updates the map in the background).
// An upstream's health key (docs/routing-and-health.md "Keys") is what fails together: the provider,
// base URL, credential, upstream model and route kind; the credential enters as a short hash, so
// neither the key string nor health() nor a log line ever holds the key itself.
import type { RoutingStrategy, UpstreamHealthReport, UpstreamIdentity, UpstreamState } from '../../options/routing-options.js';
import type { RouteName, Upstream } from '../../types.js';
import { type BreakerSettings, BreakerState, type Transition } from './circuit-breaker.js';
import { type Candidate, chooseOrder } from './choose-upstreams.js';
import { healthOutcomeOf } from './health-failure.js';
import type { HealthReads } from './health-reads.js';
import { type HealthSignals, announce, reportOf } from './health-signals.js';
import { CLAIM_RETRY_MS, CLAIM_WAIT_MS, type Claim, trialHeld } from './trial-claims.js';
import type { SharedHealth, SharedRecord } from './shared-health.js';
import { createHash } from 'node:crypto';

export type { HealthSignals } from './health-signals.js';

export interface HealthSettings {
  strategy: RoutingStrategy;
  /** undefined: the breaker is off (every upstream is always tried). */
  breaker: BreakerSettings | undefined;
  explore: number;
  now: () => number;
  random: () => number;
}

interface Entry {
  key: string;
  identity: UpstreamIdentity;
  breaker: BreakerState;
  /** This instance's claim on the cluster's half-open trial (shared store only); undefined: none made. */
  claim?: Claim;
  /** The last upstream admitted under this key, key included (memory only): what a health read is made with. */
  upstream?: Upstream;
  /** Its upstream model name, for the read. */
  model?: string;
  /** Open by failures a free read can tell: the trial is the gateway's read, never a caller's request ("The trial"). */
  readTrial?: boolean;
  /** The read under way (callers with nowhere else to go wait for it). */
  reading?: Promise<void>;
  /** When this instance last lost the cluster's claim to make the read. */
  readLostAt?: number;
  /** The read made when the cooldown ends, with no request needed to start it. */
  readTimer?: ReturnType<typeof setTimeout>;
}

// the reasons for which a free read tells whether the upstream serves again: connect, timeout and 5xx
// failures (an account refusal or a vendor's named wait keep a caller's trial: a read may pass while the request would not)
const READ_REASONS: ReadonlySet<string> = new Set(['failures', 'failure-rate', 'trial-failed']);

/** One admitted call: what its outcome is recorded against. */
export interface Admission {
  entry: Entry;
  as: 'closed' | 'trial';
  started: number;
  /** The caller's id: its own failures are counted apart (circuit-breaker.ts). */
  caller: string | undefined;
}

/** What a request is asked, for the `'price'` strategy: the price of the request on an upstream's model. */
export type PriceOf = (upstreamModel: string) => number | undefined;

// most keys kept: an operator's lists are short, but a resolver may build base URLs per tenant
const MAX_ENTRIES = 10_000;

export class UpstreamHealth {
  private readonly entries = new Map<string, Entry>();
  private shared: SharedHealth | undefined;
  /** `'latency'` choices made: every (1 / explore)-th explores (a floor, not a chance: never a long drought). */
  private latencyChoices = 0;
  private reads: HealthReads | undefined;
  private closed = false;

  constructor(
    readonly settings: HealthSettings,
    private readonly signals: HealthSignals,
  ) {}

  /** Stops the shared store's subscription and timer. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of this.entries.values()) if (entry.readTimer) clearTimeout(entry.readTimer);
    await this.shared?.close();
  }

  /** The vendors' free reads: after a cooldown, the trial of an upstream opened by its failures is one of them ("The trial"). */
  readWith(reads: HealthReads): void {
    this.reads = reads;
  }

  /** Shares state changes through Redis (routing.store). */
  share(shared: SharedHealth): void {
    this.shared = shared;
  }

  /**
   * The list in the order to try it: `'ordered'` (the default) hands the list back as it is, so the
   * hot path allocates nothing; the other strategies order the usable upstreams, the rest after them.
   */
  order(upstreams: readonly Upstream[], route: RouteName, model: string, strategy: RoutingStrategy, priceOf?: PriceOf, caller?: string): readonly Upstream[] {
    if (strategy === 'ordered' || upstreams.length < 2) return upstreams;
    const now = this.settings.now();
    const usable: Array<Candidate & { upstream: Upstream }> = [];
    const rest: Upstream[] = [];
    upstreams.forEach((upstream, index) => {
      const entry = this.entries.get(healthKeyOf(upstream, route, model));
      if (entry && this.settings.breaker && !this.ready(entry, now, caller)) rest.push(upstream);
      else usable.push({ upstream, index, weight: weightOf(upstream), latencyMs: entry?.breaker.latencyMs, price: strategy === 'price' ? priceOf?.(upstream.model ?? model) : undefined });
    });
    const { explore } = this.settings;
    const explores = strategy === 'latency' && explore > 0 && ++this.latencyChoices % Math.max(1, Math.round(1 / explore)) === 0;
    const chosen = chooseOrder(usable, strategy, this.settings.random, explores).map((candidate) => candidate.upstream);
    return rest.length > 0 ? [...chosen, ...rest] : chosen;
  }

  /** Admits a call to `upstream` now, or undefined when its breaker keeps it out (open, or its half-open trial taken). */
  admit(upstream: Upstream, route: RouteName, model: string, caller?: string): Admission | undefined {
    const entry = this.entryOf(upstream, route, model);
    const now = this.settings.now();
    if (!this.settings.breaker) return { entry, as: 'closed', started: now, caller };
    if (entry.breaker.openFor(caller, now)) return undefined;
    if (entry.readTrial && entry.breaker.state !== 'closed') {
      // the gateway's read is the trial: started once the cooldown is over, never carried by this request
      if (entry.breaker.state === 'half-open' || now >= entry.breaker.openUntil) this.startRead(entry, now);
      return undefined;
    }
    if (this.shared && entry.breaker.state !== 'closed' && entry.breaker.usable(now) && !trialHeld(entry, now, this.shared, this.settings.now)) return undefined;
    const admitted = entry.breaker.admit(now);
    if (!admitted) return undefined;
    if (admitted.moved) announce(entry.key, entry.identity, admitted.moved, this.signals);
    if (this.reads) this.remember(entry, upstream, model);
    return { entry, as: admitted.as, started: now, caller };
  }

  /**
   * The health read under way for `upstream`, if one is: a caller whose list has nowhere else to go
   * waits for it rather than being refused because a trial is running. It never rejects.
   */
  reading(upstream: Upstream, route: RouteName, model: string): Promise<void> | undefined {
    return this.entries.get(healthKeyOf(upstream, route, model))?.reading;
  }

  /** Whether `upstream` would be admitted now (taking nothing): to tell whether a fallback has anywhere to go. */
  usable(upstream: Upstream, route: RouteName, model: string, caller?: string): boolean {
    if (!this.settings.breaker) return true;
    const entry = this.entries.get(healthKeyOf(upstream, route, model));
    return entry === undefined || this.ready(entry, this.settings.now(), caller);
  }

  /** The call answered. `latencyMs` is its time to answer (first byte of a stream, whole answer otherwise). */
  succeeded(admission: Admission, latencyMs: number): void {
    const { entry } = admission;
    const moved = entry.breaker.succeeded(this.settings.now(), admission.as, latencyMs, this.settings.breaker ?? NEVER_OPENS, admission.caller);
    if (moved) this.moved(entry, moved);
  }

  /** The call failed with `error`: counted when it is the upstream's failure (health-failure.ts). */
  failed(admission: Admission, error: unknown): void {
    const { entry } = admission;
    const outcome = healthOutcomeOf(error);
    const now = this.settings.now();
    if (outcome === 'neutral') return entry.breaker.released(admission.as);
    const settings = this.settings.breaker ?? NEVER_OPENS;
    const moved =
      outcome === 'answered'
        ? entry.breaker.succeeded(now, admission.as, undefined, settings, admission.caller)
        : this.settings.breaker
          ? entry.breaker.failed(now, admission.as, outcome, settings, admission.caller)
          : undefined;
    if (moved) this.moved(entry, moved);
  }

  /** The soonest time an open upstream of the list may be tried again (for a 503's Retry-After). */
  soonestOpenUntil(upstreams: readonly Upstream[], route: RouteName, model: string, caller?: string): number | undefined {
    let soonest: number | undefined;
    for (const upstream of upstreams) {
      const breaker = this.entries.get(healthKeyOf(upstream, route, model))?.breaker;
      const own = caller !== undefined ? breaker?.callers.get(caller)?.openUntil : undefined;
      // closed to this caller alone, and open or not for the rest: it waits for the later of the two
      const until = breaker === undefined ? undefined : Math.max(breaker.state === 'closed' ? 0 : breaker.openUntil, own ?? 0);
      if (until !== undefined && (soonest === undefined || until < soonest)) soonest = until;
    }
    return soonest;
  }

  /** Every known upstream's state now (router.health()). */
  report(): UpstreamHealthReport[] {
    const now = this.settings.now();
    return [...this.entries.values()].map(({ identity, breaker }) => reportOf(identity, breaker, now));
  }

  /** Another instance's state change (shared-health.ts): applied to the local map, announced nowhere (that instance did). */
  adopt(record: SharedRecord): void {
    const entry = this.entries.get(record.key) ?? this.add(record.key, record.upstream);
    if (record.caller !== undefined) {
      // open for one caller alone on another instance: for that caller here too, and for no one else
      entry.breaker.adoptCaller(record.caller, record.state, record.since, record.openUntil ?? 0);
      return;
    }
    // a new state starts a new round of claims: the trial it ends (or the open it begins) is over
    if (entry.breaker.adopt(record.state, record.reason, record.since, record.openUntil ?? 0, this.settings.now())) {
      entry.claim = undefined;
      this.planRead(entry, record.state, record.reason);
    }
  }

  // this instance's own transition: announced and shared; a claimed trial ends with it
  private moved(entry: Entry, moved: Transition): void {
    // one caller's opening or closing leaves the upstream, and its trial, as they were for everyone else
    if (moved.caller === undefined) {
      if (entry.claim?.state === 'won') this.shared?.endTrial(entry.key);
      entry.claim = undefined;
      this.planRead(entry, moved.state, moved.reason);
    }
    announce(entry.key, entry.identity, moved, this.signals, this.shared);
  }

  /** Keeps the upstream a read would be made with: the last one admitted, in memory only. */
  private remember(entry: Entry, upstream: Upstream, model: string): void {
    if (entry.upstream !== upstream) {
      entry.upstream = upstream;
      entry.model = upstream.model ?? model;
    }
  }

  /** On an opening for everyone: whether its trial is a free read, and the read planned for when the cooldown ends. */
  private planRead(entry: Entry, state: UpstreamState, reason: string): void {
    if (state === 'half-open') return;
    if (entry.readTimer) clearTimeout(entry.readTimer);
    entry.readTimer = undefined;
    entry.readTrial = state === 'open' && READ_REASONS.has(reason) && entry.upstream !== undefined && this.reads !== undefined && this.reads.has(entry.upstream);
    if (!entry.readTrial || this.closed) return;
    const wait = Math.max(0, entry.breaker.openUntil - this.settings.now());
    entry.readTimer = setTimeout(() => {
      entry.readTimer = undefined;
      this.startRead(entry, this.settings.now());
    }, wait);
    entry.readTimer.unref();
  }

  /**
   * Makes the read that is the trial, once (docs/routing-and-health.md "The trial"): claimed for the
   * whole cluster first with a shared store, then sent; its answer closes the upstream or opens it for
   * another cooldown, as a trial request's would. A claim another instance holds leaves the read to it.
   */
  private startRead(entry: Entry, now: number): void {
    if (entry.reading || this.closed || !entry.readTrial || !this.reads || !entry.upstream) return;
    if (entry.breaker.state === 'open' && now < entry.breaker.openUntil) return;
    if (entry.readLostAt !== undefined && now - entry.readLostAt < CLAIM_RETRY_MS) return;
    const reads = this.reads;
    const upstream = entry.upstream;
    const model = entry.model ?? '';
    const claiming = this.shared?.claimTrial(entry.key);
    const claimed = claiming ? claiming.catch(() => true) : Promise.resolve(true);
    const reading = claimed
      .then((won) => {
        if (!won) {
          entry.readLostAt = this.settings.now();
          return;
        }
        if (claiming) entry.claim = { state: 'won', at: this.settings.now() };
        const admitted = entry.breaker.admit(this.settings.now());
        if (!admitted) return;
        if (admitted.moved) announce(entry.key, entry.identity, admitted.moved, this.signals);
        const admission: Admission = { entry, as: admitted.as, started: this.settings.now(), caller: undefined };
        return reads.read(upstream, model).then(
          () => {
            // a read's time says nothing of the paid calls' latency: the estimate is left as it was
            const moved = entry.breaker.succeeded(this.settings.now(), admission.as, undefined, this.settings.breaker ?? NEVER_OPENS);
            if (moved) this.moved(entry, moved);
          },
          (error: unknown) => {
            const outcome = healthOutcomeOf(error);
            const at = this.settings.now();
            const settings = this.settings.breaker ?? NEVER_OPENS;
            // any answer (a 404 of a vendor without the read) says it serves; a read that told nothing
            // (the gateway's own pool was full) fails the trial all the same: the cooldown starts again
            const moved =
              outcome === 'answered'
                ? entry.breaker.succeeded(at, admission.as, undefined, settings)
                : entry.breaker.failed(at, admission.as, outcome === 'neutral' ? { account: false } : outcome, settings);
            if (moved) this.moved(entry, moved);
          },
        );
      })
      .catch((error: unknown) => {
        this.signals.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the health read of an upstream failed unexpectedly');
      })
      .finally(() => {
        if (entry.reading === reading) entry.reading = undefined;
      });
    entry.reading = reading;
  }

  /** Whether `entry` may be sent to now: its breaker lets it, and no other instance holds its trial. */
  private ready(entry: Entry, now: number, caller?: string): boolean {
    if (!entry.breaker.usable(now) || entry.breaker.openFor(caller, now)) return false;
    // its trial is the gateway's read: no request goes to it before the read closed it
    if (entry.readTrial && entry.breaker.state !== 'closed') return false;
    if (!this.shared || entry.breaker.state === 'closed') return true;
    const claim = entry.claim;
    return claim === undefined || claim.state === 'won' || now - claim.at >= (claim.state === 'pending' ? CLAIM_WAIT_MS : CLAIM_RETRY_MS);
  }

  private entryOf(upstream: Upstream, route: RouteName, model: string): Entry {
    const key = healthKeyOf(upstream, route, model);
    return this.entries.get(key) ?? this.add(key, identityOf(upstream, route, model));
  }

  private add(key: string, identity: UpstreamIdentity): Entry {
    if (this.entries.size >= MAX_ENTRIES) this.forgetHealthy();
    const entry = { key, identity, breaker: new BreakerState() };
    this.entries.set(key, entry);
    return entry;
  }

  // keys made per tenant could grow without end: the closed ones without failures are forgotten
  private forgetHealthy(): void {
    for (const [key, entry] of this.entries) if (entry.breaker.state === 'closed' && entry.breaker.failures === 0 && entry.breaker.callers.size === 0) this.entries.delete(key);
  }
}

/** Breaker settings under which nothing opens: latency and counts only, for `breaker: false`. */
const NEVER_OPENS: BreakerSettings = { failures: Infinity, failureRate: Infinity, windowMs: 60_000, minCalls: Infinity, cooldownMs: 0, accountCooldownMs: 0, maxRetryAfterMs: 0, minCallers: 1 };

function weightOf(upstream: Upstream): number {
  const weight = upstream.weight;
  return typeof weight === 'number' && Number.isFinite(weight) && weight >= 0 ? weight : 1;
}

const ROUTE_KINDS: Readonly<Record<RouteName, UpstreamIdentity['route']>> = {
  'images.generations': 'images',
  'images.edits': 'images',
  'images.native': 'images',
  'video.tasks': 'video',
  'chat.completions': 'chat',
  responses: 'chat',
  assets: 'assets',
};

// a hash per credential, made once: sha256 is cheap but not free on every request of the hot path
const hashes = new Map<string, string>();
const MAX_HASHES = 4096;

/** 12 characters of the credential's sha256, or 'none'. */
function credentialHash(upstream: Upstream): string {
  const secret = upstream.apiKey ?? upstream.accessKeyId;
  if (!secret) return 'none';
  let hash = hashes.get(secret);
  if (hash === undefined) {
    // keys rotate: a full cache starts over rather than growing with every key ever seen
    if (hashes.size >= MAX_HASHES) hashes.clear();
    hash = createHash('sha256').update(secret).digest('base64url').slice(0, 12);
    hashes.set(secret, hash);
  }
  return hash;
}

/** The health key of `upstream` serving `model` on `route`, as one string (a Map key, a Redis hash field). */
function healthKeyOf(upstream: Upstream, route: RouteName, model: string): string {
  return `${upstream.provider} ${upstream.baseURL} ${credentialHash(upstream)} ${upstream.model ?? model} ${ROUTE_KINDS[route]}`;
}

/** The key's parts, as health() and onUpstreamHealth tell them. */
function identityOf(upstream: Upstream, route: RouteName, model: string): UpstreamIdentity {
  return { provider: upstream.provider, baseURL: upstream.baseURL, credential: credentialHash(upstream), model: upstream.model ?? model, route: ROUTE_KINDS[route] };
}
