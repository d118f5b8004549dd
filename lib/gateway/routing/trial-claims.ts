// The cluster's one half-open trial (docs/routing-and-health.md "Several instances"): an instance's
// claim on it through the shared store, made in the background so no request waits on Redis, and how
// long a claim that Redis has not answered, or that another instance won, keeps this one waiting.
import { type SharedHealth, TRIAL_LEASE_MS } from './shared-health.js';

/** A claim made at `at`: `pending` until Redis answers, then `won` (this instance sends the trial) or `lost`. */
export interface Claim {
  state: 'pending' | 'won' | 'lost';
  at: number;
}

// a claim Redis has not answered in this long is given up: this instance sends its own trial
export const CLAIM_WAIT_MS = 2_000;
// a lost claim is tried again this often: the holder may have stopped (its lease expires)
export const CLAIM_RETRY_MS = 1_000;

/**
 * The cluster's one half-open trial (docs/routing-and-health.md "Several instances"): true when this
 * instance holds it. Otherwise a claim is made in the background (or is under way, or another
 * instance holds it) and the upstream is skipped meanwhile: the rest go elsewhere. Redis that does
 * not answer, or cannot claim, leaves the trial to this instance (as without a store).
 */
export function trialHeld(entry: { key: string; claim?: Claim }, now: number, shared: SharedHealth | undefined, clock: () => number): boolean {
  const claim = entry.claim;
  // a claim older than its lease may have passed to another instance: made again
  if (claim?.state === 'won' && now - claim.at < TRIAL_LEASE_MS) return true;
  if (claim?.state === 'pending' && now - claim.at < CLAIM_WAIT_MS) return false;
  if (claim?.state === 'pending') {
    claim.state = 'won';
    return true;
  }
  if (claim?.state === 'lost' && now - claim.at < CLAIM_RETRY_MS) return false;
  const claiming = shared?.claimTrial(entry.key);
  if (!claiming) {
    entry.claim = { state: 'won', at: now };
    return true;
  }
  const made: Claim = { state: 'pending', at: now };
  entry.claim = made;
  claiming.then(
    (won) => {
      if (entry.claim !== made) return;
      made.state = won ? 'won' : 'lost';
      made.at = clock();
    },
    () => {
      if (entry.claim === made) made.state = 'won';
    },
  );
  return false;
}
