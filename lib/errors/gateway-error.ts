// The one error type of the gateway. Everything a client sees as an error is a GatewayError rendered
// by the error middleware as the spec §2.5 object: { error: { message, type, code, param? } }.
import { redactSecrets } from '../security/redact.js';
import { ERROR_CODES, type ErrorCode, errorTypeForStatus } from './error-codes.js';

export interface GatewayErrorBody {
  error: { message: string; type: string; code: string; param?: string };
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
  /** The adapter's reading of the upstream code, where the status alone would mislead. */
  kind?: 'invalid' | 'content_policy' | 'rate_limit' | 'auth' | 'quota' | 'server';
}

export class GatewayError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly type: string;
  readonly param?: string;
  readonly retryable: boolean;
  readonly notStarted: boolean;
  readonly upstreamRequestId?: string;
  readonly retryAfterSeconds?: number;

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
      type: this.type,
    });
  }

  toJSON(): GatewayErrorBody {
    const error: GatewayErrorBody['error'] = { message: this.message, type: this.type, code: this.code };
    if (this.param !== undefined) error.param = this.param;
    return { error };
  }

  /** 400. spec §7: a missing model is exactly `model is required` with code `invalid_request_error`. */
  static invalidRequest(message: string, param?: string): GatewayError {
    return new GatewayError({ status: 400, code: ERROR_CODES.invalidRequest, message, param });
  }

  static modelRequired(): GatewayError {
    return GatewayError.invalidRequest('model is required', 'model');
  }

  /** 401. The message says what to check (spec §7 table), never echoes the key. */
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

  /** 502: the upstream answered 200 but gave no image (spec §7: "Generation fails or no image returned"). */
  static noImage(provider: string, detail: string, requestId?: string): GatewayError {
    return new GatewayError({
      status: 502,
      code: ERROR_CODES.upstreamNoImage,
      message: `The ${provider} upstream returned no image${detail}${requestIdSuffix(requestId)}`,
      upstreamRequestId: requestId,
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
   * The status mapping for upstream errors of every provider (design.md status table): caller-caused
   * 4xx keep their status, rate limits stay 429, and anything that is the operator's problem (the
   * upstream rejected the operator's key, quota, 5xx) is 502, never 401 to the caller.
   */
  static fromUpstream(failure: UpstreamFailure): GatewayError {
    const { provider, status, upstreamCode, requestId } = failure;
    const detail = describeUpstream(provider, upstreamCode, requestId);
    const said = failure.upstreamMessage ? truncate(redactSecrets(failure.upstreamMessage), 500) : `HTTP ${status}`;
    const kind = failure.kind ?? kindFromStatus(status);
    // Refusals that come before any processing (the fallback rule): a rate limit, the operator's
    // credentials or account refused, or 503 "not able to handle the request now" (RFC 9110).
    // A 500/502/504 or an error inside a 200 may come after the work began.
    const notStarted = kind === 'rate_limit' || kind === 'auth' || kind === 'quota' || (kind === 'server' && status === 503);
    const base = { upstreamRequestId: requestId, notStarted };
    switch (kind) {
      case 'content_policy':
        return new GatewayError({
          ...base,
          status: 400,
          code: ERROR_CODES.contentPolicyViolation,
          message: `The upstream rejected the content as inappropriate: ${said} ${detail}`,
        });
      case 'rate_limit':
        return new GatewayError({
          ...base,
          status: 429,
          code: ERROR_CODES.rateLimitExceeded,
          message: `The upstream is rate limiting requests: ${said} ${detail}. Retry later.`,
          retryable: true,
        });
      case 'auth':
        // The upstream's message may quote the operator's key; it is not repeated.
        return new GatewayError({
          ...base,
          status: 502,
          code: ERROR_CODES.upstreamAuthFailed,
          message: `The upstream rejected the gateway's own credentials (an operator configuration problem, not your key) ${detail}.`,
          retryable: true,
        });
      case 'quota':
        return new GatewayError({
          ...base,
          status: 502,
          code: ERROR_CODES.upstreamQuotaExceeded,
          message: `The operator's upstream account cannot serve requests now: ${said} ${detail}.`,
          retryable: true,
        });
      case 'invalid':
        return new GatewayError({
          ...base,
          status: status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 404 ? status : 400,
          code: ERROR_CODES.invalidRequest,
          message: `The upstream rejected the request: ${said} ${detail}`,
        });
      case 'server':
      default:
        return new GatewayError({
          ...base,
          status: 502,
          code: ERROR_CODES.upstreamError,
          message: `The upstream failed: ${said} ${detail}`,
          retryable: true,
        });
    }
  }
}

function kindFromStatus(status: number): NonNullable<UpstreamFailure['kind']> {
  if (status === 429) return 'rate_limit';
  if (status === 401 || status === 403) return 'auth';
  if (status === 402) return 'quota';
  // An upstream 404 means the operator mapped a model or path wrong: nothing the caller can fix.
  if (status === 404 || status >= 500 || status < 400) return 'server';
  return 'invalid';
}

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
