// The circuit breaker of one upstream (docs/routing-and-health.md "States"): closed -> open after
// `failures` consecutive failures or a failure rate over a window; open for the cooldown (or the
// vendor's Retry-After when longer, capped at `maxRetryAfterMs`); then half-open, where one real
// request is the trial and the rest go elsewhere. An operator-account failure opens it at once, for
// longer; a 429 with a Retry-After opens it at once for that wait. A failure the caller may have
// caused itself (a 5xx, a timeout) opens it for everyone only once `minCallers` callers met such
// failures in the window; before that, a caller's own `failures` in a row close it to that caller
// alone (docs/routing-and-health.md "Whose failure"). Pure: the caller passes the clock and receives
// the transition to announce.
import type { UpstreamHealthReason, UpstreamState } from '../../options/routing-options.js';

export interface BreakerSettings {
  failures: number;
  failureRate: number;
  windowMs: number;
  minCalls: number;
  cooldownMs: number;
  accountCooldownMs: number;
  /** The longest vendor Retry-After honoured; a longer one counts as this. */
  maxRetryAfterMs: number;
  /** Distinct callers whose own failures in the window it takes to open for everyone. */
  minCallers: number;
}

/**
 * A failure the breaker counts: an account failure opens at once; `retryAfterMs` is the vendor's own
 * wait; `rest`: a 429 that named a wait (readable or not), which opens at once for that wait, or for
 * the cooldown when it could not be read.
 */
export interface HealthFailure {
  account: boolean;
  rest?: boolean;
  /** A failure the request itself may have caused (a 5xx, a timeout or reset once written, an unreadable answer). */
  callerOwn?: boolean;
  retryAfterMs?: number;
}

export interface Transition {
  state: UpstreamState;
  reason: UpstreamHealthReason;
  since: number;
  openUntil?: number;
  /** Set when the change is for this one caller only (opened by its own failures, or closed by its success). */
  caller?: string;
}

/** One caller's own failures on this upstream, and the opening (for it alone) they made. */
export interface CallerHealth {
  /** Its consecutive failures of the kind it may cause. */
  failures: number;
  /** Open for this caller alone until then; 0 when its failures never opened it. */
  openUntil: number;
  since: number;
}

// the most callers kept per upstream: the oldest is forgotten first (a resolver's tenants may be many)
const MAX_CALLERS = 1_000;

// weight of the newest sample in the latency estimate: about the last 5 answers count
const LATENCY_ALPHA = 0.3;

/** One upstream's breaker and latency estimate. Mutable; one per health key. */
export class BreakerState {
  state: UpstreamState = 'closed';
  /** Consecutive failures. */
  failures = 0;
  openUntil = 0;
  since = 0;
  reason: UpstreamHealthReason | undefined;
  /** When the half-open trial was handed out; undefined when none is running. */
  trialSince: number | undefined;
  /** The longest Retry-After of the current failure streak, ms. */
  retryAfterMs = 0;
  windowStart = 0;
  windowCalls = 0;
  windowFailures = 0;
  latencyMs: number | undefined;
  /** The callers whose own failures were met in the last window: id -> when the last one was. */
  readonly failingCallers = new Map<string, number>();
  /** Each caller's own failures, while it has any (a success forgets it). */
  readonly callers = new Map<string, CallerHealth>();

  /** Whether the upstream is open for `caller` alone now (skipped for it: its own failures). */
  openFor(caller: string | undefined, now: number): boolean {
    if (caller === undefined || this.callers.size === 0) return false;
    const own = this.callers.get(caller);
    return own !== undefined && now < own.openUntil;
  }

  /** Whether a request may be sent now, without taking the trial: for ordering and listing. */
  usable(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') return now >= this.openUntil;
    return this.trialSince === undefined || this.trialStale(now);
  }

  /**
   * Admits one request now: `'closed'` (send it), `'trial'` (send it as the half-open trial), or
   * undefined (skip this upstream). `moved` is the transition open -> half-open when the cooldown ended.
   */
  admit(now: number): { as: 'closed' | 'trial'; moved?: Transition } | undefined {
    if (this.state === 'closed') return { as: 'closed' };
    let moved: Transition | undefined;
    if (this.state === 'open') {
      if (now < this.openUntil) return undefined;
      moved = this.move('half-open', 'cooldown-over', now);
    }
    if (this.trialSince !== undefined && !this.trialStale(now)) return undefined;
    this.trialSince = now;
    return { as: 'trial', ...(moved ? { moved } : {}) };
  }

  /** An answer that is not a health failure. Closes a half-open breaker only for its trial. */
  succeeded(now: number, as: 'closed' | 'trial', latencyMs: number | undefined, settings: BreakerSettings, caller?: string): Transition | undefined {
    if (latencyMs !== undefined) this.latencyMs = this.latencyMs === undefined ? latencyMs : this.latencyMs + LATENCY_ALPHA * (latencyMs - this.latencyMs);
    const own = caller !== undefined && this.callers.size > 0 ? this.callers.get(caller) : undefined;
    if (own) this.callers.delete(caller!);
    // its own failures had opened it for this caller: its success closes it again
    const ownRecovered: Transition | undefined = own && own.openUntil > 0 ? { state: 'closed', reason: 'recovered', since: now, caller: caller! } : undefined;
    if (as === 'trial' && this.state === 'half-open') {
      this.trialSince = undefined;
      this.failures = 0;
      this.retryAfterMs = 0;
      this.resetWindow(now);
      this.failingCallers.clear();
      return this.move('closed', 'recovered', now);
    }
    // an answer begun before the breaker opened does not close it: only the trial does
    if (this.state !== 'closed') return ownRecovered;
    this.failures = 0;
    this.retryAfterMs = 0;
    this.count(now, false, settings);
    return ownRecovered;
  }

  /** A health failure. Returns the transition to open, when it opened. */
  failed(now: number, as: 'closed' | 'trial', failure: HealthFailure, settings: BreakerSettings, caller?: string): Transition | undefined {
    // a vendor's wait is capped: a Retry-After of a day would otherwise keep the upstream out a day
    const waitMs = failure.retryAfterMs === undefined ? undefined : Math.min(failure.retryAfterMs, settings.maxRetryAfterMs);
    this.retryAfterMs = Math.max(this.retryAfterMs, waitMs ?? 0);
    // a 429's named wait rests the upstream that long (the ordinary cooldown when it could not be read)
    const restMs = failure.rest ? (waitMs ?? settings.cooldownMs) : undefined;
    if (this.state === 'open') {
      // another request's account failure or named wait while open: kept open that long, announced once
      if (failure.account) this.openUntil = Math.max(this.openUntil, now + Math.max(settings.accountCooldownMs, this.retryAfterMs));
      else if (restMs !== undefined) this.openUntil = Math.max(this.openUntil, now + restMs);
      return undefined;
    }
    if (failure.account) return this.open(now, 'account', Math.max(settings.accountCooldownMs, this.retryAfterMs));
    if (restMs !== undefined) return this.open(now, 'retry-after', restMs);
    if (this.state === 'half-open') {
      if (as !== 'trial') return undefined;
      return this.open(now, 'trial-failed', Math.max(settings.cooldownMs, this.retryAfterMs));
    }
    this.failures += 1;
    const rateTripped = this.count(now, true, settings);
    // a failure the caller may have caused: its own count first, everyone's only with enough callers
    const own = failure.callerOwn && caller !== undefined ? this.ownFailure(now, caller, settings) : undefined;
    if (failure.callerOwn && this.callersFailing(now, caller ?? '', settings) < settings.minCallers) return own;
    if (this.failures >= settings.failures) return this.open(now, 'failures', Math.max(settings.cooldownMs, this.retryAfterMs));
    if (rateTripped) return this.open(now, 'failure-rate', Math.max(settings.cooldownMs, this.retryAfterMs));
    return own;
  }

  /** Takes another instance's word that the upstream is open for `caller` alone until `openUntil`, or closed for it again. */
  adoptCaller(caller: string, state: 'open' | 'closed', since: number, openUntil: number): boolean {
    const own = this.callers.get(caller);
    if (state === 'closed') return this.callers.delete(caller);
    if (own && own.openUntil >= openUntil) return false;
    this.keepCaller(caller, { failures: own?.failures ?? 0, openUntil, since });
    return true;
  }

  /** Counts a caller's own failure; its `failures`-th in a row (or the next once it was open for it) opens the upstream for it alone. */
  private ownFailure(now: number, caller: string, settings: BreakerSettings): Transition | undefined {
    const own = this.callers.get(caller) ?? { failures: 0, openUntil: 0, since: now };
    own.failures += 1;
    this.keepCaller(caller, own);
    if (own.failures < settings.failures || now < own.openUntil) return undefined;
    own.openUntil = now + settings.cooldownMs;
    own.since = now;
    return { state: 'open', reason: 'caller-failures', since: now, openUntil: own.openUntil, caller };
  }

  /** Notes `caller` among the window's failing callers; how many distinct ones the window holds. */
  private callersFailing(now: number, caller: string, settings: BreakerSettings): number {
    for (const [id, at] of this.failingCallers) if (now - at > settings.windowMs) this.failingCallers.delete(id);
    // re-inserted: the Map's order stays oldest first, and the oldest goes first when full
    this.failingCallers.delete(caller);
    if (this.failingCallers.size >= MAX_CALLERS) this.failingCallers.delete(this.failingCallers.keys().next().value!);
    this.failingCallers.set(caller, now);
    return this.failingCallers.size;
  }

  private keepCaller(caller: string, own: CallerHealth): void {
    this.callers.delete(caller);
    if (this.callers.size >= MAX_CALLERS) this.callers.delete(this.callers.keys().next().value!);
    this.callers.set(caller, own);
  }

  /** A request that ended neither answered nor failed by the upstream (its client left): the trial is free again. */
  released(as: 'closed' | 'trial'): void {
    if (as === 'trial') this.trialSince = undefined;
  }

  /** Takes another instance's word (shared health): open until `openUntil`, or closed. True when it changed the state. */
  adopt(state: 'open' | 'closed', reason: UpstreamHealthReason, since: number, openUntil: number, now: number): boolean {
    if (state === 'open') {
      if (this.state === 'open' && this.openUntil >= openUntil) return false;
      this.state = 'open';
      this.openUntil = openUntil;
    } else {
      if (this.state === 'closed' || (this.state === 'open' && now < this.openUntil && this.since > since)) return false;
      this.state = 'closed';
      this.failures = 0;
      this.retryAfterMs = 0;
    }
    this.trialSince = undefined;
    this.reason = reason;
    this.since = since;
    return true;
  }

  private open(now: number, reason: UpstreamHealthReason, forMs: number): Transition {
    this.trialSince = undefined;
    this.openUntil = now + forMs;
    return this.move('open', reason, now);
  }

  private move(state: UpstreamState, reason: UpstreamHealthReason, now: number): Transition {
    this.state = state;
    this.reason = reason;
    this.since = now;
    return { state, reason, since: now, ...(state === 'open' ? { openUntil: this.openUntil } : {}) };
  }

  /** Counts a call in the rate window; true when the failure rate now opens the breaker. */
  private count(now: number, failed: boolean, settings: BreakerSettings): boolean {
    if (now - this.windowStart > settings.windowMs) this.resetWindow(now);
    this.windowCalls += 1;
    if (failed) this.windowFailures += 1;
    return failed && this.windowCalls >= settings.minCalls && this.windowFailures / this.windowCalls > settings.failureRate;
  }

  private resetWindow(now: number): void {
    this.windowStart = now;
    this.windowCalls = 0;
    this.windowFailures = 0;
  }

  // a trial whose request never settled (it cannot, but a lost promise must not keep the upstream out forever)
  private trialStale(now: number): boolean {
    return this.trialSince !== undefined && now - this.trialSince > TRIAL_STALE_MS;
  }
}

/** A trial older than this is given up and another request may take it. */
const TRIAL_STALE_MS = 10 * 60_000;
