// The skipping clock for one describe block (docs/contributing.md "The clock of the specs"): installed
// before its first test and taken away after its last, so the blocks of a file that hold a vendor's job
// while the gateway reads it stay on the system's clock and the others skip the pauses between reads.
import { afterAll, beforeAll } from 'vitest';
import { type SkippingClock, useSkippingClock } from '../../lib/testing/index.js';

/** Call inside a `describe`: the gateway's pauses between reads of queued vendor work take no time in it. */
export function skippingPauses(): void {
  let installed: SkippingClock | undefined;
  beforeAll(() => {
    installed = useSkippingClock();
  });
  afterAll(() => installed?.restore());
}
