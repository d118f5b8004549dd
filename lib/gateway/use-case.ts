// The one shape of a use case (docs/architecture.md "One use-case shape"): a route reads and validates,
// calls one gateway function with plain data, and writes what it gets back. The function takes a
// `UseCaseRequest` (who asks, how to stop, where results are served) and returns an `Outcome`: the
// answer, or the error to answer with, and in both cases the usage of what it did (for the request's one
// usage event). Nothing here knows Express: the host's request object is carried opaquely and handed to
// `resolveUpstream` only.
import type { RateLimitFields } from '../errors/quota-exceeded-error.js';
import type { CancelSignal } from '../transport/upstream-http.js';
import type { Caller, LostBy, ProviderName, RouteName } from '../types.js';
import type { ResolveUpstreamInput } from '../options/host-hooks.js';
import type { TokenUsage } from '../json/token-usage.js';
import { rejectionOf } from '../errors/rejection-of.js';
import type { WorkEnd } from './ledger/work-end.js';
import type { KeptWorkRecord, UpstreamTaskRef } from '../stores/idempotency/idempotency-store.js';
import { type AttemptRecord, startAttempt } from './ledger/vendor-work.js';

/** How a use case learns that its client went away. */
export interface Cancellation {
  /** Fires when the client leaves; cheap enough for every upstream call (no AbortController per request). */
  readonly clientGone: CancelSignal;
  /** The same event as an AbortSignal, made on first use (result storage needs one). */
  readonly signal: AbortSignal;
}

/** What every use case is handed besides its own input. */
export interface UseCaseRequest {
  caller: Caller;
  /** The host's own request object, handed to `resolveUpstream` as `req` and to nothing else. */
  hostRequest: ResolveUpstreamInput['req'];
  /** The base URL the client reached the router at: stored results are signed under it (localResultStorage). */
  resultBase: string;
  cancel: Cancellation;
  /**
   * Given the use case's usage as it starts, to read while it runs: an Idempotency-Key's lease records
   * what the request charged and whether its upstream call started (gateway/kept-work/leased-work.ts).
   */
  track?(usage: Usage): void;
  /**
   * The request asked for a quote (`Prefer: dry-run`) on a route that gives one: the use case runs to
   * where it would charge and answers the quote instead (tenancy/with-charge.ts).
   */
  dryRun?: boolean;
  /** The request's id (`x-request-id`), for the moderation policy's audit events. */
  requestId?: string;
}

/** What a use case did, for the request's usage event (UsageEvent) and its RateLimit headers. */
export interface Usage {
  model: string;
  provider?: ProviderName;
  /** The model the upstream was called with, when the resolver named one other than `model`: its price (ledger/pricing.ts). */
  upstreamModel?: string;
  /** Images answered to the caller. */
  images: number;
  /** Images the upstream answered with, before the gateway kept at most what the request allowed. */
  upstreamImages?: number;
  upstreamRequestId?: string;
  /** Bytes written to result storage. */
  storedBytes?: number;
  /** `WxH` of each image answered, when the upstream said. */
  imageSizes?: string[];
  /** The upstream's own usage counters, when it gave them. */
  upstreamUsage?: Record<string, number>;
  /** The caller's quotas after this request's charge: RateLimit headers of a 2xx answer. */
  rateLimit?: readonly RateLimitFields[];
  /** The upstream's token counts (chat, responses), as it reported them. */
  tokens?: TokenUsage;
  /** The images charged: the most the request may be answered with (image routes). */
  imagesAsked?: number;
  /** The `quality` an image request asked for, for its price. */
  imageQuality?: string;
  /**
   * A call that starts paid upstream work was made: an error after it may have been paid for, so
   * the client is told not to retry blindly (`x-should-retry: false`) and the usage event says what
   * was not delivered (docs/tenancy-and-billing.md "Billing from usage events").
   */
  attempted?: boolean;
  /** Each upstream call that may start paid work, in order: what the vendors may bill (ledger/vendor-work.ts). */
  attempts?: AttemptRecord[];
  /** Why work the vendor made did not reach the caller, when the place it was lost knows (a cut stream, a cancel). */
  lostBy?: LostBy;
  /** The image size asked (`WxH`): the price of images not delivered, and of those whose size the vendor did not say. */
  sizeAsked?: string;
  /** The caller was answered at the deadline while the work went on (answer-deadline.ts): its charge is settled when the request ends. */
  lateAnswer?: boolean;
  /**
   * Settles the work's charge by the books of its end, when that end settles it (late work, a lapsed
   * key's recorded charge, kept work at its expiry): called once, by the books, before the usage event
   * (docs/tenancy-and-billing.md "Settlement").
   */
  settleLater?: (end: WorkEnd) => Promise<void>;
  /** What the request took from the caller's quotas (with-charge.ts): given back by another instance if this one stops. */
  charged?: { images?: number; imagesWindowEnd?: number; budget?: number; budgetWindowEnd?: number };
  /** Told when an upstream call that may start paid work is made (a tracker's, see UseCaseRequest.track). */
  onAttempt?: () => void;
  /**
   * Set by an Idempotency-Key's tracker when another instance could finish the request from an upstream
   * task id: the image pipeline then runs a request on an upstream task API of its own (submit, this
   * record, then polls), and resolves this once the id is recorded (gateway/kept-work/lapsed-keys.ts).
   */
  onUpstreamTask?: (task: UpstreamTaskRef) => Promise<void>;
  /** Images made that the moderation policy withheld (gateway/moderation/). */
  flaggedImages?: number;
  /** Each answered image's Content Credentials, in the order of `data` (docs/provenance.md). */
  provenance?: Array<'valid' | 'invalid' | 'absent'>;
}

/**
 * Records that `upstream` is being called for paid work (the provider and upstream model of the usage
 * event, and one attempt of the ledger). `model`: the upstream's own name for the model, when it has one.
 */
export function attempting(usage: Usage, provider: ProviderName, model?: string): AttemptRecord {
  usage.provider = provider;
  // a fallback to an upstream without a name of its own is called with the caller's
  if (model !== undefined && model !== usage.model) usage.upstreamModel = model;
  else delete usage.upstreamModel;
  usage.attempted = true;
  const attempt = startAttempt((usage.attempts ??= []), provider);
  usage.onAttempt?.();
  return attempt;
}

/** A use case's result: the answer, or the error the caller is answered with; the usage either way. */
export type Outcome<A> =
  | { ok: true; answer: A; usage: Usage }
  /**
   * `late`: the upstream missed the answer deadline but its work goes on (bounded) and ends in this
   * outcome: the inbound side keeps it for the client's retry (docs/tenancy-and-billing.md "Retries").
   * `answerMs`: that answer deadline, the longest a retry that joins the work waits for it.
   */
  | { ok: false; error: unknown; usage: Usage; late?: Promise<Outcome<A>>; answerMs?: number };

/** A fresh usage record for a request on `model`. */
export function usageFor(model: string): Usage {
  return { model, images: 0 };
}

/** Runs `work` and turns a rejection into a failed outcome that keeps what `usage` had gathered. */
export function settle<A>(usage: Usage, work: () => Promise<A>): Promise<Outcome<A>> {
  return rejectionOf(work).then(
    (answer): Outcome<A> => ({ ok: true, answer, usage }),
    (error: unknown): Outcome<A> => ({ ok: false, error, usage }),
  );
}

/** Work kept for a client's retry, as the event that settles it reads it (docs/tenancy-and-billing.md "Retries"). */
export type KeptWork = Pick<KeptWorkRecord, 'model' | 'provider' | 'upstreamModel' | 'images' | 'sizes' | 'quality' | 'lostBy'>;

/**
 * How one unit of paid work ended (a request, a lapsed Idempotency-Key, kept work at its expiry): the
 * facts the ledger's books of it are reckoned from (ledger/work-books.ts). Whoever saw the end hands
 * these over; every figure is the books'.
 */
export interface EndedWork {
  caller: Caller | undefined;
  route: RouteName;
  /** The request's id, for log lines; none for work booked by the scheduler. */
  requestId?: string;
  status: number;
  latencyMs: number;
  errorCode: string | undefined;
  /** What the work did; its `settleLater`, when set, is the charge the books settle before the usage event. */
  usage: Usage;
  end: WorkEnd;
  /** Kept work this end settles: delivered to this request (charged here), or expired unclaimed. */
  kept?: { work: KeptWork; how: 'delivered' | 'expired' };
  /** An event goes out (a caller, not a replay, not a quote). */
  reports: boolean;
}
