// The health of callback endpoints (docs/video-tasks-and-callbacks.md "Endpoints that heal"): an
// endpoint is one tenant's callback URL origin and path (its query aside), so one tenant's failures
// never pause another's deliveries to the same receiver. The task store keeps it next to the delivery
// log, so every instance on a shared store sees one state, and one instance alone disables (and one
// alone re-enables) an endpoint. These methods are optional in TaskStore: a store without them runs
// with endpoints never disabled.

/** One tenant's endpoint: its callback URL's origin and path, without the query string. */
export interface EndpointRef {
  tenant: string;
  /** `https://hooks.example.com/video`: origin and path only. */
  url: string;
}

/** Why an endpoint was disabled: too many failed attempts in a row, or no success for too long. */
export type EndpointDisableReason = 'attempts' | 'hours';

export interface EndpointHealth extends EndpointRef {
  disabled: boolean;
  /** When it was disabled, ms since the epoch; absent while enabled. */
  disabledAt?: number;
  reason?: EndpointDisableReason;
  /** Failed attempts in a row since the last success (or since it was enabled). */
  failures: number;
  /** The first failed attempt since the last success, ms since the epoch; absent when the last attempt succeeded. */
  failingSince?: number;
  /** The last successful attempt, ms since the epoch. */
  lastSuccessAt?: number;
}

/** When an endpoint is disabled (`deliveries.disableAfter`), and how long an enabled one's record is kept. */
export interface EndpointRule {
  /** Failed attempts in a row that disable it. */
  attempts: number;
  /** Time with failed attempts and no success that disables it, ms. */
  failingMs: number;
  /** How long the record of an endpoint that is not disabled is kept after its last attempt, ms. */
  keepMs: number;
}

/** The outcome of one attempt: whether the receiver took it (a 2xx), and when it started. */
export interface EndpointOutcome {
  ok: boolean;
  /** ms since the epoch. */
  at: number;
}

/**
 * The optional endpoint methods of a TaskStore: all four, or none. Each is atomic across the
 * instances that share the store.
 */
export interface EndpointHealthStore {
  /**
   * Counts one attempt; disables the endpoint when `rule` says so. `disabledNow` is true for the one
   * call that disabled it (so its hook runs once, whichever instance made the attempt).
   */
  recordEndpointAttempt(endpoint: EndpointRef, outcome: EndpointOutcome, rule: EndpointRule): Promise<{ health: EndpointHealth; disabledNow: boolean }>;
  /** The endpoint's health; undefined when nothing is recorded of it (it is enabled). */
  getEndpoint(endpoint: EndpointRef): Promise<EndpointHealth | undefined>;
  /** Enables it and clears its failures; true for the one call that found it disabled. */
  enableEndpoint(endpoint: EndpointRef, rule: Pick<EndpointRule, 'keepMs'>): Promise<boolean>;
  /** The disabled endpoints, of `tenant` or of every tenant. */
  listDisabledEndpoints(tenant?: string): Promise<EndpointHealth[]>;
}

/** Whether an attempt at `at` after `health`'s failures disables the endpoint, and why. */
export function disableReason(health: Pick<EndpointHealth, 'failures' | 'failingSince'>, at: number, rule: EndpointRule): EndpointDisableReason | undefined {
  if (health.failures >= rule.attempts) return 'attempts';
  if (health.failingSince !== undefined && at - health.failingSince >= rule.failingMs) return 'hours';
  return undefined;
}
