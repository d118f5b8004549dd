// The one error type of the gateway. Everything a client sees as an error is a GatewayError rendered
// by the error middleware as the contract §2.5 object: { error: { message, type, code, param } }, `param`
// null when no single field is at fault (OpenAI's API description requires the member: docs/errors.md).
import { redactSecrets } from './redact.js';
import { ERROR_CODES, type ErrorCode } from './error-codes.js';
import { UPSTREAM_ERROR_RULES, type UpstreamErrorKind, errorTypeForStatus, kindFromStatus } from './status-policy.js';

export interface GatewayErrorBody {
  /** `categories` and `stage`: a content policy refusal's (content-policy-error.ts). */
  error: { message: string; type: string; code: string; param: string | null; categories?: string[]; stage?: string };
}

export interface GatewayErrorInit {
  status: number;
  code: ErrorCode;
  message: string;
  param?: string;
  /** True when another attempt may succeed: connection errors, timeouts, 429, 5xx, upstream auth. */
  retryable?: boolean;
  /**
   * True only when the upstream certainly did not start the work (so nothing was generated or
   * billed): no connection was ever made, or it refused before processing (429, 503, auth, quota).
   * False when unknown. withFallback tries the next upstream only for these (see there).
   */
  notStarted?: boolean;
  upstreamRequestId?: string;
  /** Seconds the client should wait before retrying: sent as `Retry-After` (429, 503). */
  retryAfterSeconds?: number;
  /** The upstream sent a `Retry-After` that cannot be read (docs/routing-and-health.md "What counts"). */
  retryAfterUnreadable?: boolean;
  /** `error.type` when the status's usual type would mislead (a 503 that is the gateway's own, not an upstream's). */
  type?: string;
}

/** What an adapter learned from a failed upstream answer, before the status mapping. */
export interface UpstreamFailure {
  provider: string;
  /** The upstream's HTTP status (200 for errors carried inside a 200 body). */
  status: number;
  upstreamCode?: string;
  upstreamMessage?: string;
  requestId?: string;
  /** The field the upstream named (an OpenAI-compatible error's `param`): kept on a 4xx the caller gets. */
  param?: string;
  /** The adapter's reading of the upstream code, where the status alone would mislead. */
  kind?: UpstreamErrorKind;
  /**
   * The upstream's own `Retry-After`, in seconds: kept on a 429 or 503 the caller gets. `'unreadable'`:
   * it sent one that cannot be read (a bad HTTP date, a negative or non-numeric value); routing then
   * rests the upstream for its ordinary cooldown (docs/routing-and-health.md "What counts").
   */
  retryAfterSeconds?: number | 'unreadable';
}

/**
 * The brand every GatewayError carries, a registered symbol so that every copy of the package shares it:
 * a host that loads the ESM build while a dependency loads the CommonJS one (or another version) holds
 * two GatewayError classes, and `instanceof` knows only its own. undici brands its errors the same way.
 */
const BRAND = Symbol.for('express-image-gateway.GatewayError');

export class GatewayError extends Error {
  static {
    // on the prototype, not each instance: no own key, so an error's JSON, its log fields and a
    // structural comparison stay what they were
    Object.defineProperty(this.prototype, BRAND, { value: true });
  }

  /**
   * True for a GatewayError made by any copy of the package (the ESM and CommonJS builds side by side,
   * or two installed versions); `instanceof` is true only for this copy's. Use it for errors a host's
   * code may have made, such as what its `resolveUpstream` throws.
   * @example if (GatewayError.is(error)) res.status(error.status).json(error.toJSON());
   */
  static is(value: unknown): value is GatewayError {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  readonly status: number;
  readonly code: ErrorCode;
  readonly type: string;
  readonly param?: string;
  readonly retryable: boolean;
  readonly notStarted: boolean;
  readonly upstreamRequestId?: string;
  readonly retryAfterSeconds?: number;
  /**
   * True when the upstream sent a `Retry-After` the gateway could not read: routing rests a 429's
   * upstream for the ordinary cooldown then (docs/routing-and-health.md "What counts").
   */
  readonly retryAfterUnreadable?: boolean;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.name = 'GatewayError';
    this.status = init.status;
    this.code = init.code;
    this.type = init.type ?? errorTypeForStatus(init.status);
    this.param = init.param;
    this.retryable = init.retryable ?? false;
    this.notStarted = init.notStarted ?? false;
    this.upstreamRequestId = init.upstreamRequestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    // set only when true: an error's own keys (its JSON, log fields, a structural comparison) stay as they were
    if (init.retryAfterUnreadable) this.retryAfterUnreadable = true;
  }

  /** The same error with these secrets (the upstream's keys) removed from its message. */
  withoutSecrets(secrets: ReadonlyArray<string | undefined>): GatewayError {
    const message = redactSecrets(this.message, secrets);
    if (message === this.message) return this;
    return new GatewayError({
      status: this.status,
      code: this.code,
      message,
      param: this.param,
      retryable: this.retryable,
      notStarted: this.notStarted,
      upstreamRequestId: this.upstreamRequestId,
      retryAfterSeconds: this.retryAfterSeconds,
      ...(this.retryAfterUnreadable ? { retryAfterUnreadable: true } : {}),
      type: this.type,
    });
  }

  toJSON(): GatewayErrorBody {
    // always present: strictly generated OpenAI clients reject an error object without it (docs/errors.md)
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param ?? null } };
  }

  /** 400. contract §7: a missing model is exactly `model is required` with code `invalid_request_error`. */
  static invalidRequest(message: string, param?: string): GatewayError {
    return new GatewayError({ status: 400, code: ERROR_CODES.invalidRequest, message, param });
  }

  static modelRequired(): GatewayError {
    return GatewayError.invalidRequest('model is required', 'model');
  }

  /** 401. The message says what to check (contract §7 table), never echoes the key. */
  static authentication(message: string): GatewayError {
    return new GatewayError({ status: 401, code: ERROR_CODES.invalidApiKey, message });
  }

  static permissionDenied(message: string): GatewayError {
    return new GatewayError({ status: 403, code: ERROR_CODES.permissionDenied, message });
  }

  static modelNotFound(model: string): GatewayError {
    return new GatewayError({
      status: 404,
      code: ERROR_CODES.modelNotFound,
      message: `The model '${truncate(model, 128)}' does not exist or you do not have access to it.`,
      param: 'model',
    });
  }

  /**
   * 429 `rate_limit_exceeded`, with `Retry-After` when `retryAfterSeconds` is given: for a host's own
   * limiter in `tenancy.afterAuthentication`.
   * @example next(GatewayError.rateLimited('Your plan allows 60 requests a minute.', 30))
   */
  static rateLimited(message: string, retryAfterSeconds?: number): GatewayError {
    const wait = retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds) ? undefined : Math.max(1, Math.ceil(retryAfterSeconds));
    return new GatewayError({ status: 429, code: ERROR_CODES.rateLimitExceeded, message, retryable: true, ...(wait !== undefined ? { retryAfterSeconds: wait } : {}) });
  }

  static notFound(message: string): GatewayError {
    return new GatewayError({ status: 404, code: ERROR_CODES.notFound, message });
  }

  static tooLarge(message: string, param?: string): GatewayError {
    return new GatewayError({ status: 413, code: ERROR_CODES.requestTooLarge, message, param });
  }

  static unsupportedMediaType(message: string): GatewayError {
    return new GatewayError({ status: 415, code: ERROR_CODES.unsupportedMediaType, message });
  }

  static internal(): GatewayError {
    return new GatewayError({ status: 500, code: ERROR_CODES.internalError, message: 'Internal gateway error.' });
  }

  /** 502 for an upstream that answered, but not with something usable. */
  static badUpstreamResponse(provider: string, detail: string, requestId?: string): GatewayError {
    return new GatewayError({
      status: 502,
      code: ERROR_CODES.upstreamBadResponse,
      message: `The ${provider} upstream returned an unusable response: ${detail}${requestIdSuffix(requestId)}`,
      retryable: true,
      upstreamRequestId: requestId,
    });
  }

  /** 502: the upstream answered 200 but gave no image (contract §7: "Generation fails or no image returned"). */
  static noImage(provider: string, detail: string, requestId?: string): GatewayError {
    return new GatewayError({
      status: 502,
      code: ERROR_CODES.upstreamNoImage,
      message: `The ${provider} upstream returned no image${detail}${requestIdSuffix(requestId)}`,
      upstreamRequestId: requestId,
    });
  }

  /**
   * 503 `upstream_unavailable`: every upstream of the model's list is open (docs/routing-and-health.md);
   * nothing was sent. `Retry-After` is when the first of them is tried again.
   */
  static upstreamUnavailable(model: string, retryAfterSeconds?: number): GatewayError {
    const wait = retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds) ? undefined : Math.max(1, Math.ceil(retryAfterSeconds));
    return new GatewayError({
      status: 503,
      code: ERROR_CODES.upstreamUnavailable,
      message: `No upstream for the model '${model}' is available now (each failed recently and is resting). Retry later.`,
      retryable: true,
      notStarted: true,
      ...(wait !== undefined ? { retryAfterSeconds: wait } : {}),
    });
  }

  /**
   * 504. `notStarted`: the deadline passed before a connection was made (the request was never
   * written). Otherwise the upstream may still be working on it, so it is not started elsewhere.
   */
  static upstreamTimeout(provider: string, timeoutMs: number, how: { notStarted?: boolean } = {}): GatewayError {
    return new GatewayError({
      status: 504,
      code: ERROR_CODES.upstreamTimeout,
      message: how.notStarted
        ? `The ${provider} upstream could not be connected to within ${timeoutMs} ms. Retry later.`
        : `The ${provider} upstream did not answer within ${timeoutMs} ms. Retry, or raise the upstream's timeoutMs for slow jobs.`,
      retryable: true,
      notStarted: how.notStarted ?? false,
    });
  }

  /**
   * 502 for a network failure. `notStarted`: it happened before a connection was made (refused,
   * DNS, unreachable, TLS handshake); a reset after the request was written may have started work.
   */
  static upstreamUnreachable(provider: string, detail: string, how: { notStarted?: boolean } = {}): GatewayError {
    return new GatewayError({
      status: 502,
      code: ERROR_CODES.upstreamUnreachable,
      message: `The ${provider} upstream could not be reached (${detail}).`,
      retryable: true,
      notStarted: how.notStarted ?? false,
    });
  }

  /**
   * An upstream's failure as the caller sees it. The status, code and retry rules are the status
   * policy's (status-policy.ts, one table for every provider); only the wording is here.
   */
  static fromUpstream(failure: UpstreamFailure): GatewayError {
    const { provider, status, upstreamCode, requestId } = failure;
    const detail = describeUpstream(provider, upstreamCode, requestId);
    const said = failure.upstreamMessage ? truncate(redactSecrets(failure.upstreamMessage), 500) : `HTTP ${status}`;
    const kind = failure.kind ?? kindFromStatus(status);
    const rule = UPSTREAM_ERROR_RULES[kind];
    const callerStatus = rule.status(status);
    const wait = failure.retryAfterSeconds;
    // the upstream's own wait is what a client retrying sooner would hit again (docs/errors.md)
    const retryAfterSeconds = (callerStatus === 429 || callerStatus === 503) && typeof wait === 'number' && Number.isFinite(wait) ? Math.max(1, Math.ceil(wait)) : undefined;
    // the field the upstream blamed is the caller's to fix only when the caller gets the 4xx (docs/errors.md)
    const param = callerStatus < 500 && failure.param ? truncate(failure.param, 100) : undefined;
    return new GatewayError({
      status: callerStatus,
      code: rule.code,
      message: UPSTREAM_WORDING[kind](said, detail),
      ...(param !== undefined ? { param } : {}),
      retryable: rule.retryable,
      notStarted: rule.notStarted(status),
      upstreamRequestId: requestId,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      ...(wait === 'unreadable' ? { retryAfterUnreadable: true } : {}),
    });
  }
}

/** What the caller reads for each kind of upstream failure: `said` is the upstream's message, `detail` its code and request id. */
const UPSTREAM_WORDING: Readonly<Record<UpstreamErrorKind, (said: string, detail: string) => string>> = {
  content_policy: (said, detail) => `The upstream rejected the content as inappropriate: ${said} ${detail}`,
  rate_limit: (said, detail) => `The upstream is rate limiting requests: ${said} ${detail}. Retry later.`,
  // the upstream's message may quote the operator's key; it is not repeated
  auth: (_said, detail) => `The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) ${detail}.`,
  quota: (said, detail) => `The operator's upstream account cannot serve requests now: ${said} ${detail}.`,
  invalid: (said, detail) => `The upstream rejected the request: ${said} ${detail}`,
  server: (said, detail) => `The upstream failed: ${said} ${detail}`,
};

function describeUpstream(provider: string, code: string | undefined, requestId: string | undefined): string {
  const parts = [`${provider}${code ? ` code ${truncate(code, 80)}` : ''}`];
  if (requestId) parts.push(`request id ${truncate(requestId, 100)}`);
  return `(${parts.join(', ')})`;
}

function requestIdSuffix(requestId: string | undefined): string {
  return requestId ? ` (request id ${truncate(requestId, 100)})` : '';
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
