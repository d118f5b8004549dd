// Delivers one callback (contract §6): POSTs the task state, exactly the body a query returns, to the
// caller's URL. The URL is checked again against its resolved addresses and the connection pinned
// to the checked one; redirects are not followed; each attempt has its own timeout. With a signing
// secret the request is signed by the Standard Webhooks scheme, and every attempt for one state
// carries the same webhook-id, so receivers stay idempotent (contract §6.4).
import { Webhook } from 'standardwebhooks';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import { type CallbackUrlPolicy, checkCallbackUrl } from '../../security/callback-url.js';
import { NonPublicAddressError, resolvePublicAddress } from '../../security/public-url.js';
import type { DeliveryJob } from '../../stores/scheduling/job-scheduler.js';

/** The receiver's answer to one attempt: its status and (bounded) body, for the delivery log. */
export interface CallbackAnswer {
  status: number;
  body: Buffer;
}

export interface CallbackDeliverer {
  /** One attempt; throws when it must be retried. */
  deliver(job: DeliveryJob): Promise<CallbackAnswer>;
}

export interface CallbackDelivererOptions {
  http: UpstreamHttp;
  policy: CallbackUrlPolicy;
  signingSecret?: string;
  timeoutMs: number;
  /** DNS, replaceable in tests. */
  resolve?: (host: string) => Promise<Array<{ address: string; family: number }>>;
}

export class CallbackDeliveryError extends Error {
  /** False when retrying cannot help (the URL is no longer allowed). */
  readonly retryable: boolean;
  /** The receiver's answer, when one came (a non-2xx status). */
  readonly answer?: CallbackAnswer;
  constructor(message: string, retryable: boolean, answer?: CallbackAnswer) {
    super(message);
    this.name = 'CallbackDeliveryError';
    this.retryable = retryable;
    if (answer) this.answer = answer;
  }
}

const USER_AGENT = 'express-image-gateway-callbacks/1';

export function createCallbackDeliverer(options: CallbackDelivererOptions): CallbackDeliverer {
  const signer = options.signingSecret ? new Webhook(options.signingSecret) : undefined;
  return {
    async deliver(job) {
      const check = checkCallbackUrl(job.url, options.policy);
      if (!check.ok) throw new CallbackDeliveryError(`callback URL refused: it ${check.reason}`, false);
      let target;
      try {
        target = await resolvePublicAddress(check.url.hostname, { allowPrivate: options.policy.allowLocal }, options.resolve);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // a name that now points inside is refused for good; a failed lookup may pass later
        throw new CallbackDeliveryError(`callback host refused: ${message}`, !(error instanceof NonPublicAddressError && error.inside));
      }
      const now = new Date();
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': job.eventId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      };
      if (signer) headers['webhook-signature'] = signer.sign(job.eventId, now, job.body);
      // a replay (docs/video-tasks-and-callbacks.md "Delivery log"): the same webhook-id, a fresh timestamp and signature
      if (job.replay !== undefined) headers['webhook-replay'] = 'true';
      let answer: CallbackAnswer;
      try {
        const response = await options.http.request({
          provider: 'callback',
          method: 'POST',
          url: check.url.href,
          headers,
          body: job.body,
          timeoutMs: options.timeoutMs,
          maxBytes: 64 * 1024,
          pinnedAddress: target,
        });
        answer = { status: response.status, body: response.body };
      } catch (error) {
        throw new CallbackDeliveryError(`callback POST failed: ${error instanceof Error ? error.message : String(error)}`, true);
      }
      // 3xx included: redirects are not followed, so the receiver did not take the event
      if (answer.status < 200 || answer.status >= 300) throw new CallbackDeliveryError(`callback receiver answered HTTP ${answer.status}`, true, answer);
      return answer;
    },
  };
}
