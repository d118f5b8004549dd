// The answer deadline of work that is kept (docs/tenancy-and-billing.md "Retries"): the caller is
// answered 504 when an upstream's `timeoutMs` passes, as always, but paid work that may already be
// under way is not cut there. The upstream call goes on up to a bound (idempotency.keptWorkSeconds;
// work on a vendor's queue is cancelled there, providers/submitted-work.ts), and its outcome is handed
// on as `late`, for the inbound side to keep for the client's retry, with the deadline that passed:
// a retry that joins the work is answered within that same deadline.
import { GatewayError } from '../errors/gateway-error.js';
import type { Outcome, Usage } from './use-case.js';

export class AnswerDeadline {
  private timer?: NodeJS.Timeout;
  private expire?: (error: GatewayError, answerMs: number) => void;

  /** Starts the deadline of one upstream attempt. */
  arm(provider: string, timeoutMs: number): void {
    this.disarm();
    this.timer = setTimeout(() => this.expire?.(GatewayError.upstreamTimeout(provider, timeoutMs), timeoutMs), timeoutMs);
    this.timer.unref();
  }

  /** The attempt answered (or failed) in time. */
  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * `work`'s outcome, or at the deadline a 504 whose `late` is `work`'s outcome when it comes, and whose
   * `answerMs` is the deadline that passed: a retry that joins the late work waits no longer than it.
   */
  race<A>(work: Promise<Outcome<A>>, usage: Usage): Promise<Outcome<A>> {
    return new Promise((resolve) => {
      this.expire = (error, answerMs) => {
        usage.lateAnswer = true;
        resolve({ ok: false, error, usage, late: work, answerMs });
      };
      void work.then((outcome) => {
        this.disarm();
        resolve(outcome);
      });
    });
  }
}
