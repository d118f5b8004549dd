// The use case of the routes whose body goes to an OpenAI-compatible upstream as it is, model renamed:
// chat completions, responses and Ark's native image generation (contract §4.2). Resolves, charges,
// falls back, and answers the upstream's JSON, or the opened stream for `stream: true` (a failure
// before the stream opened may fall back to the next upstream; after, it is the relay's to tell).
// Native image groups are counted with the provider's own rules (providers/ark-image-groups.ts).
import type { CallContext } from '../providers/call-context.js';
import type { OpenedStream, PassthroughResponse } from '../providers/provider.js';
import { nativeImageGroups, requireCapability } from '../providers/registry.js';
import { promptTextOf, responseOfJson } from '../telemetry/genai-fields.js';
import type { RouteName } from '../types.js';
import { withFallback } from './fallback.js';
import type { GatewayDeps } from './gateway-deps.js';
import { resolveUpstreams } from './resolve-upstreams.js';
import type { QuotaCharge, QuotaCost } from './tenancy/quotas.js';
import { refundUnproduced, withCharge } from './tenancy/with-charge.js';
import { type Outcome, type Usage, type UseCaseRequest, usageFor } from './use-case.js';

export interface ForwardCall {
  route: RouteName;
  /** The endpoint path under the provider's OpenAI-compatible base. */
  upstreamPath: string;
  /** Validated, its media URLs checked (security/forwarded-urls.ts). */
  body: Record<string, unknown>;
  model: string;
}

export type ForwardAnswer =
  | { kind: 'json'; response: PassthroughResponse }
  /**
   * An opened stream for the inbound side to relay. `observe` sees each relayed chunk (the images a
   * stream returned); `settled` resolves once the upstream body closed, with the usage of what was
   * streamed and the charge settled (images not streamed given back).
   */
  | { kind: 'stream'; stream: OpenedStream; observe?: (chunk: Buffer) => void; settled: Promise<Usage> };

export function forwardRequest(deps: GatewayDeps, request: UseCaseRequest, forward: ForwardCall): Promise<Outcome<ForwardAnswer>> {
  const usage = usageFor(forward.model);
  const groups = forward.route === 'images.native' ? nativeImageGroups() : undefined;
  const cost: QuotaCost = { requests: 1, ...(groups ? { images: groups.asked(forward.body) } : {}) };
  return resolveUpstreams(deps.options, { model: forward.model, route: forward.route, caller: request.caller, req: request.hostRequest }).then(
    (upstreams) =>
      // quotas after validation and the resolver, before the upstream call; images back when it fails
      withCharge(
        deps.quotas,
        request.caller,
        cost,
        usage,
        (charge) => {
          const call: CallContext = { http: deps.http, signal: request.cancel.clientGone, limits: deps.options.limits };
          const { body, route, upstreamPath } = forward;
          const described = { route, model: forward.model, choices: typeof body.n === 'number' ? body.n : undefined, prompt: () => promptTextOf(body) };
          if (body.stream === true) {
            return withFallback(upstreams, deps.options, described, (upstream) => {
              usage.provider = upstream.provider;
              return requireCapability(upstream, 'passthrough', route, deps.options.logger).openStream(call, upstreamPath, body, upstream);
            }).then((stream) => streamed(usage, stream, groups?.streamCounter(), charge, cost));
          }
          return withFallback(upstreams, deps.options, { ...described, response: (sent: PassthroughResponse) => responseOfJson(sent.body) }, (upstream) => {
            usage.provider = upstream.provider;
            return requireCapability(upstream, 'passthrough', route, deps.options.logger).forwardJson(call, upstreamPath, body, upstream);
          }).then((response): ForwardAnswer => {
            usage.upstreamRequestId = response.requestId;
            const counted = groups?.countAnswer(response.body);
            if (counted) {
              usage.images = counted.images;
              if (counted.sizes) usage.imageSizes = counted.sizes;
              if (counted.usage) usage.upstreamUsage = counted.usage;
            }
            return { kind: 'json', response };
          });
        },
        forward.body.stream === true ? 'by-work' : 'at-answer',
      ),
    (error: unknown): Outcome<ForwardAnswer> => ({ ok: false, error, usage }),
  );
}

/**
 * The stream answer: a streamed image group is billed by the images its events returned
 * (upstreams §2.6), settled when the upstream body closes (ended, failed, or cut with its client).
 */
function streamed(usage: Usage, stream: OpenedStream, counter: ((chunk: Buffer) => number) | undefined, charge: QuotaCharge, cost: QuotaCost): ForwardAnswer {
  usage.upstreamRequestId = stream.headers['x-request-id'];
  const settled = new Promise<Usage>((resolve) => {
    stream.body.once('close', () => {
      void refundUnproduced(charge, cost, usage.images).then(() => resolve(usage));
    });
  });
  const observe = counter ? (chunk: Buffer): void => void (usage.images = counter(chunk)) : undefined;
  return { kind: 'stream', stream, ...(observe ? { observe } : {}), settled };
}
