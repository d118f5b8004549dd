// Asks the host's resolveUpstream where a model goes and checks the answer, then tries the upstreams
// in order (fallback, design.md). The fallback rule: the next upstream only when the failed one
// certainly did not start the work (GatewayError.notStarted) and nothing was sent to the client yet,
// because a fallback after work began generates (and bills) the same images twice, or leaves an
// orphaned Ark task running beside the new one.
import { GatewayError } from '../errors/gateway-error.js';
import type { ResolvedOptions } from './options.js';
import type { ProviderName, ResolveUpstreamInput, RouteName, Upstream } from '../types.js';

const PROVIDERS: ReadonlySet<string> = new Set<ProviderName>(['dashscope', 'ark', 'openai']);

export async function resolveUpstreams(options: ResolvedOptions, input: ResolveUpstreamInput): Promise<readonly Upstream[]> {
  let answer: Awaited<ReturnType<ResolvedOptions['resolveUpstream']>>;
  try {
    answer = await options.resolveUpstream(input);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    options.logger.error('resolveUpstream threw; answering 500', { route: input.route, error: error instanceof Error ? error.message : String(error) });
    throw GatewayError.internal();
  }
  const upstreams = answer == null ? [] : Array.isArray(answer) ? (answer as readonly Upstream[]) : [answer as Upstream];
  if (upstreams.length === 0) throw GatewayError.modelNotFound(input.model);
  for (const upstream of upstreams) {
    const problem = describeProblem(upstream);
    if (problem) {
      // the operator's mistake, told to the operator (log) and not to the caller
      options.logger.error(`resolveUpstream returned an invalid upstream: ${problem}`, { route: input.route, model: input.model });
      throw GatewayError.internal();
    }
  }
  return upstreams;
}

/** A route served by one provider only: another one from the resolver is the operator's mistake (500, logged). */
export function requireProvider(upstream: Upstream, provider: ProviderName, route: RouteName, options: ResolvedOptions): void {
  if (upstream.provider === provider) return;
  options.logger.error(`resolveUpstream returned provider '${upstream.provider}' for route ${route}; only '${provider}' serves it`);
  throw GatewayError.internal();
}

export function secretsOf(upstream: Upstream): Array<string | undefined> {
  return [upstream.apiKey, upstream.secretAccessKey, upstream.accessKeyId, ...Object.values(upstream.headers ?? {})];
}

function describeProblem(upstream: Upstream): string | undefined {
  if (upstream === null || typeof upstream !== 'object') return 'not an object';
  if (!PROVIDERS.has(upstream.provider)) return `provider must be one of ${[...PROVIDERS].join(', ')}`;
  if (typeof upstream.baseURL !== 'string' || !/^https?:\/\/[^/]/i.test(upstream.baseURL)) return 'baseURL must be an http(s) URL';
  return undefined;
}

/**
 * Runs `attempt` on each upstream in turn until one answers or a failure rules out the next one.
 * Falls back on: connection refused, DNS failure, network unreachable, a connect that timed out
 * before a socket existed, a TLS handshake failure, and upstream 429, 503 and auth/quota refusals.
 * Never on: a timeout or reset after the request was written, 500/502/504, an unreadable answer,
 * a caller error (4xx), or a client that went away. An `attempt` makes one upstream call that
 * starts work (create, generate, forward), so the last failure tells whether work began.
 */
export async function withFallback<T>(
  upstreams: readonly Upstream[],
  options: ResolvedOptions,
  attempt: (upstream: Upstream) => Promise<T>,
): Promise<T> {
  for (let index = 0; ; index += 1) {
    const upstream = upstreams[index]!;
    try {
      return await attempt(upstream);
    } catch (caught) {
      // an upstream may quote the request it got, the operator's key included
      const error = caught instanceof GatewayError ? caught.withoutSecrets(secretsOf(upstream)) : caught;
      const retry = error instanceof GatewayError && error.retryable && error.notStarted && index + 1 < upstreams.length;
      if (!retry) throw error;
      options.logger.warn('upstream failed, trying the next one', { provider: upstream.provider, status: error.status, code: error.code });
    }
  }
}
