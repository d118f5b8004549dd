// The arithmetic of a lease on work an instance holds (docs/image-tasks.md "Restarts and several
// instances", docs/tenancy-and-billing.md "Retries"): the holder renews it about three times per lease,
// so a renewal that is late or lost once does not let it lapse; a lease that was not renewed by its end
// means the instance stopped, and another ends the work then instead of at its (much later) deadline.

/** How long a lease lasts and how often its holder renews it, ms. */
export interface LeaseTerms {
  leaseMs: number;
  renewMs: number;
}

// renewals are store writes: never more often than this, whatever the lease
const MIN_RENEW_MS = 100;

/** The terms of a lease of `leaseSeconds`: renewed every third of it. */
export function leaseTerms(leaseSeconds: number): LeaseTerms {
  const leaseMs = leaseSeconds * 1000;
  return { leaseMs, renewMs: Math.max(MIN_RENEW_MS, Math.floor(leaseMs / 3)) };
}

/** The end of a lease taken or renewed at `now`. */
export function leaseEnd(terms: LeaseTerms, now: number): number {
  return now + terms.leaseMs;
}

/** True once a lease ended without a renewal; work recorded before leases existed has none, and never lapses. */
export function hasLapsed(leaseUntil: number | undefined, now: number): boolean {
  return leaseUntil !== undefined && leaseUntil <= now;
}

/** When a watch looks at held work next: the lease's end, or the work's deadline when that comes first. */
export function nextLookAt(leaseUntil: number | undefined, deadline: number): number {
  return leaseUntil === undefined ? deadline : Math.min(leaseUntil, deadline);
}
