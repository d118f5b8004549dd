// What a failed upstream call means for the caller (upstream-http.ts): every error of a send, a read
// or a stream becomes one GatewayError (502 unusable answer, 502 unreachable, 504 timeout) or stays
// a ClientGoneError, with `notStarted` set when the connection was never up (the fallback rule's question).
import { ClientGoneError } from '../errors/client-gone-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import { NonPublicAddressError } from '../security/public-url.js';
import { TooLargeError } from './bounded-read.js';
import type { Deadline } from './deadline.js';
import type { UpstreamRequest } from './upstream-call.js';

/**
 * undici's names for a connection the upstream closed or cut before the answer was whole; the
 * gateway's messages call it what node:http did (and what callers already match on): ECONNRESET.
 */
const RESET_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);

/** `neverConnected`: the errors of calls that failed before their connection was up (exchange.ts). */
export function upstreamFailure(
  call: Pick<UpstreamRequest, 'provider' | 'maxBytes' | 'timeoutMs'>,
  error: unknown,
  deadline: Pick<Deadline, 'reason' | 'expired'>,
  neverConnected: WeakSet<object>,
): Error {
  if (error instanceof GatewayError || error instanceof ClientGoneError) return error;
  if (error instanceof TooLargeError) return GatewayError.badUpstreamResponse(call.provider, `the response is larger than ${call.maxBytes} bytes`);
  if (error instanceof NonPublicAddressError && error.inside) {
    return GatewayError.badUpstreamResponse(call.provider, 'its URL names a host that resolves to a loopback, private or link-local address, which the gateway does not connect to');
  }
  const notStarted = typeof error === 'object' && error !== null && neverConnected.has(error);
  if (deadline.reason()) {
    return deadline.expired() ? GatewayError.upstreamTimeout(call.provider, call.timeoutMs, { notStarted }) : new ClientGoneError();
  }
  // undici's parser errors do not always name llhttp's code
  const code = (error as { code?: unknown }).code ?? (error instanceof Error && error.name === 'HTTPParserError' ? 'HPE_INVALID' : undefined);
  // an answer that is not HTTP (HPE_*, or headers past undici's limit) or claims a compression it
  // does not have (Z_*) was received: the upstream is reachable, its answer is unusable
  if (typeof code === 'string' && (code.startsWith('HPE_') || code.startsWith('Z_') || code === 'UND_ERR_HEADERS_OVERFLOW')) {
    return GatewayError.badUpstreamResponse(call.provider, `the answer could not be read (${code})`);
  }
  return GatewayError.upstreamUnreachable(call.provider, typeof code === 'string' ? (RESET_CODES.has(code) ? 'ECONNRESET' : code) : 'network error', { notStarted });
}
