// The `deliveries` option (docs/configuration.md "deliveries"): the delivery log that records every
// callback delivery and its attempts, for the operator's and each tenant's reading and replays
// (docs/video-tasks-and-callbacks.md "Delivery log"), the endpoints it disables, and what the
// `onEndpointDisabled` hook hears. Types only; resolved in gateway/options/delivery-options.ts.

/**
 * The delivery log. On by default (with a task store that has the delivery methods: both shipped
 * stores do); `deliveries: false` turns it off.
 * @example deliveries: { retentionDays: 14, maxEntries: 50_000, disableAfter: { hours: 12 } }
 */
export interface DeliveryOptions {
  /**
   * Days a delivery and its attempts are kept, counted from the delivery's creation, whatever the
   * task's own `keepSeconds`. A whole number from 1 to 365. Default 7.
   * @example retentionDays: 30
   */
  retentionDays?: number;
  /**
   * Most deliveries `memoryTaskStore` keeps; past it, the oldest is forgotten first. Redis keeps
   * every delivery for its retention. A whole number >= 1. Default 10,000.
   * @example maxEntries: 50_000
   */
  maxEntries?: number;
  /**
   * When a tenant's endpoint (its callback URL's origin and path) is disabled: its new deliveries are
   * then recorded `paused` and not attempted until it is enabled (docs/video-tasks-and-callbacks.md
   * "Endpoints that heal"). Giving one key keeps the other's default.
   * @example disableAfter: { hours: 6, attempts: 50 }
   */
  disableAfter?: EndpointDisableOptions;
  /**
   * Most attempts to one endpoint running at once in this instance; the others wait without holding
   * one of the scheduler's workers, so a hanging endpoint delays no other. A whole number from 1 to
   * 1,000. Default 2.
   * @example perEndpointInFlight: 4
   */
  perEndpointInFlight?: number;
}

/** `deliveries.disableAfter`: either rule disables an endpoint. */
export interface EndpointDisableOptions {
  /**
   * Hours with failed attempts and no successful one (counted from the first failure after the last
   * success). A number from 0.001 to 8,760. Default 24.
   * @example hours: 6
   */
  hours?: number;
  /**
   * Failed attempts in a row. A whole number from 1 to 1,000,000. Default 100.
   * @example attempts: 50
   */
  attempts?: number;
}

/**
 * What `onEndpointDisabled` hears: one tenant's endpoint that was just disabled. Its URL is the
 * callback URL's origin and path: the query string (a receiver's own token, say) is never in it.
 */
export interface EndpointDisabledEvent {
  /** The endpoint: origin and path. @example url: 'https://hooks.example.com/video' */
  url: string;
  /** @example origin: 'https://hooks.example.com' */
  origin: string;
  /** @example path: '/video' */
  path: string;
  /** `Caller.id` of the tenant whose endpoint it is. */
  tenant: string;
  /** `'attempts'`: `disableAfter.attempts` failed in a row; `'hours'`: no success for `disableAfter.hours` while attempts failed. */
  reason: 'attempts' | 'hours';
  /** ms since the epoch. */
  disabledAt: number;
  /** Failed attempts in a row. */
  failures: number;
  /** The first failure after the last success, ms since the epoch. */
  failingSince: number;
  /** The last success, ms since the epoch; null when none is recorded. */
  lastSuccessAt: number | null;
}
