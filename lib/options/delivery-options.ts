// The `deliveries` option (docs/configuration.md "deliveries"): the delivery log that records every
// callback delivery and its attempts, for the operator's and each tenant's reading and replays
// (docs/video-tasks-and-callbacks.md "Delivery log"). Types only; resolved in
// gateway/options/delivery-options.ts.

/**
 * The delivery log. On by default (with a task store that has the delivery methods: both shipped
 * stores do); `deliveries: false` turns it off.
 * @example deliveries: { retentionDays: 14, maxEntries: 50_000 }
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
}
