// The use case of the routes whose body goes to an OpenAI-compatible upstream as it is, model renamed:
// chat completions, responses and Ark's native image generation (contract §4.2). Resolves, charges,
// falls back, and answers the upstream's JSON, or the opened stream for `stream: true` (a failure
// before the stream opened may fall back to the next upstream; after, it is the relay's to tell).
// Native image groups are counted with the provider's own rules (providers/ark-image-groups.ts).
import type { CallContext } from '../providers/call-context.js';
import type { Provider } from '../providers/provider.js';
import { readImageCount } from '../images/image-count.js';
import { parseJsonBody } from '../json/json-values.js';
import type { OpenedStream, PassthroughResponse } from '../providers/provider.js';
import { nativeImageGroups, requireCapability } from '../providers/registry.js';
import { checkRefusedFields, checkSize, refusesOn } from '../models/model-rules.js';
import type { ModelEndpoint, ModelEntry } from '../options/model-catalogue.js';
import { rowFor } from './routing/catalogue-routing.js';
import { promptTextOf, responseOfJson } from '../telemetry/genai-fields.js';
import type { RouteName } from '../types.js';
import { withFallback } from './routing/fallback.js';
import type { GatewayDeps } from './gateway-deps.js';
import { resolveUpstreams } from './routing/resolve-upstreams.js';
import type { QuotaCost } from './tenancy/quota-cost.js';
import { settleBooks, withCharge } from './tenancy/with-charge.js';
import type { StreamCharge } from './image-pipeline/image-streams.js';
import type { Quoted } from './tenancy/quote.js';
import { type Outcome, type Usage, type UseCaseRequest, attempting, usageFor } from './use-case.js';
import { StreamTokenReader, type TokenUsage, tokensOfAnswer } from '../json/token-usage.js';
import type { ActivePolicy } from './moderation/moderation.js';
import { checkForwardedAnswer, checkForwardedInput, moderatesForward } from './moderation/route-moderation.js';
import { upstreamModelsOf } from './ledger/pricing.js';

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
  | { kind: 'stream'; stream: OpenedStream; observe: (chunk: Buffer) => void; settled: Promise<Usage> }
  /** A dry run (`Prefer: dry-run`): what the request would cost and reserve; nothing was sent or charged. */
  | Quoted;

const FORWARD_ENDPOINTS: Readonly<Partial<Record<ForwardCall['route'], ModelEndpoint>>> = {
  'chat.completions': '/v1/chat/completions',
  responses: '/v1/responses',
  'images.native': '/api/v3/images/generations',
};

/**
 * The refused fields (and, on the native image route, sizes) of the row the request follows, before
 * anything is charged or sent: docs/models.md "Which row a request follows".
 */
function checkCatalogue(forward: ForwardCall, entry: ModelEntry | undefined): void {
  const endpoint = FORWARD_ENDPOINTS[forward.route];
  if (!entry || !endpoint || !refusesOn(entry, endpoint)) return;
  checkRefusedFields(entry, forward.model, forward.body);
  if (forward.route === 'images.native') checkSize(entry, forward.model, forward.body.size, 'size');
}

export function forwardRequest(deps: GatewayDeps, request: UseCaseRequest, forward: ForwardCall): Promise<Outcome<ForwardAnswer>> {
  const usage = usageFor(forward.model);
  request.track?.(usage);
  // tokens are read only for a usage event: the JSON parse of each answer is not paid for nothing
  const countsTokens = deps.options.onUsage !== undefined || deps.options.pricing !== undefined;
  const groups = forward.route === 'images.native' ? nativeImageGroups() : undefined;
  let cost: QuotaCost;
  const prices = deps.quotas.enabled || request.dryRun === true;
  // the caller-facing entry of the name is its row whatever the resolver answers: checked before it
  const named = deps.options.models.named(forward.model);
  try {
    if (named) checkCatalogue(forward, named);
    cost = { requests: 1, ...(groups ? { images: nativeImagesAsked(groups, forward.body) } : {}) };
    // a money budget reserves the most this may cost (docs/tenancy-and-billing.md "Cost in money");
    // read only by quotas and quotes: nothing is priced per request when neither is asked
    if (prices) cost.priced = { model: forward.model, ...(cost.images !== undefined ? { images: cost.images } : {}), ...(typeof forward.body.size === 'string' ? { size: forward.body.size } : {}) };
  } catch (error) {
    return Promise.resolve({ ok: false, error, usage });
  }
  if (cost.images !== undefined) usage.imagesAsked = cost.images;
  // the input checks of a body that makes images (the native image route; chat and responses that make
  // images) before the resolver and any charge; any other body is not read (docs/content-safety.md)
  let moderated: ActivePolicy | undefined;
  const resolved = () => resolveUpstreams(deps.options, { model: forward.model, route: forward.route, caller: request.caller, req: request.hostRequest });
  const ready =
    deps.options.moderation && moderatesForward(forward.route, forward.body, forward.model, deps.options.models)
      ? checkForwardedInput(deps, request, forward.route, forward.model, forward.body).then((active) => {
          moderated = active;
          return resolved();
        })
      : resolved();
  return ready.then(
    (upstreams) => {
      // any other name follows the row of the upstream model the resolver chose
      if (!named) {
        try {
          checkCatalogue(forward, rowFor(deps.options.models, forward.model, upstreams[0]));
        } catch (error) {
          return { ok: false, error, usage };
        }
      }
      // a name the price table lacks reserves by the upstream models the resolver chose
      if (prices) cost.priced = { ...cost.priced!, upstreamModels: upstreamModelsOf(upstreams) };
      // quotas after validation and the resolver, before the upstream call; images back when it fails
      return withCharge(
        deps.quotas,
        request.caller,
        cost,
        usage,
        (charge) => {
          const call: CallContext = { http: deps.http, signal: request.cancel.clientGone, limits: deps.options.limits, safety: deps.options.safetyIdentifier?.tagOf(request.caller.id) };
          const { body, route, upstreamPath } = forward;
          const described = {
            route,
            model: forward.model,
            choices: typeof body.n === 'number' ? body.n : undefined,
            tenant: request.caller.id,
            // the request's id only for a failed attempt's log line (a UUID made for every request cost CPU on the hot path)
            request: request.hostRequest,
            prompt: () => promptTextOf(body),
          };
          if (body.stream === true) {
            return withFallback(upstreams, deps.options, described, { usage, idOf: openedRequestId }, (upstream) => {
              attempting(usage, upstream.provider, upstream.model);
              return requireCapability(upstream, 'passthrough', route, deps.options.logger).openStream(call, upstreamPath, body, upstream);
            }).then((stream) => streamed({ quotas: deps.quotas, charge, cost, clientGone: () => request.cancel.clientGone.aborted }, usage, stream, groups?.streamCounter(), countsTokens));
          }
          const answered = withFallback(upstreams, deps.options, { ...described, response: (sent: PassthroughResponse) => responseOfJson(sent.body) }, { usage, idOf: sentRequestId }, (upstream) => {
            attempting(usage, upstream.provider, upstream.model);
            return requireCapability(upstream, 'passthrough', route, deps.options.logger).forwardJson(call, upstreamPath, body, upstream);
          }).then((response): ForwardAnswer => {
            usage.upstreamRequestId = response.requestId;
            const tokens = countsTokens ? tokensOfJson(response.body) : undefined;
            if (tokens) usage.tokens = tokens;
            const counted = groups?.countAnswer(response.body);
            if (counted) {
              // never more images answered (and billed) than were charged: the rest are dropped and reported
              const charged = cost.images ?? counted.images;
              usage.images = Math.min(counted.images, charged);
              if (counted.sizes) usage.imageSizes = counted.sizes.slice(0, charged);
              if (counted.usage) usage.upstreamUsage = counted.usage;
              if (counted.images > charged) {
                usage.upstreamImages = counted.images;
                return { kind: 'json', response: { ...response, body: withImagesCut(response.body, charged) } };
              }
            }
            return { kind: 'json', response };
          });
          // the caller's output checks drop flagged images before the answer is written (docs/content-safety.md)
          return moderated ? answered.then((answer) => (answer.kind === 'json' ? checkedAnswer(deps, moderated!, request, forward, call, usage, answer) : answer)) : answered;
        },
        forward.body.stream === true ? 'by-work' : 'at-answer',
        // a dry run stops here, answered the quote of this charge
        request.dryRun,
      );
    },
    (error: unknown): Outcome<ForwardAnswer> => ({ ok: false, error, usage }),
  );
}

/**
 * The answer with the images the caller's policy flags dropped. The vendor's attempt is settled first,
 * as the books would read the answer unchecked (ledger/reckoning.ts): what the check then drops or
 * refuses was made and is the tenant's loss (`lostBy: 'flagged'`), never a refusal of the vendor's.
 */
function checkedAnswer(
  deps: GatewayDeps,
  active: ActivePolicy,
  request: UseCaseRequest,
  forward: ForwardCall,
  call: CallContext,
  usage: Usage,
  answer: Extract<ForwardAnswer, { kind: 'json' }>,
): Promise<ForwardAnswer> {
  const attempt = usage.attempts?.at(-1);
  if (active.outputImages && attempt && attempt.outcome === undefined) {
    attempt.outcome = 'made';
    attempt.images = usage.upstreamImages ?? usage.images;
    if (attempt.id === undefined && usage.upstreamRequestId) attempt.id = usage.upstreamRequestId;
  }
  return checkForwardedAnswer(deps, active, request, forward.route, forward.model, call, usage, answer.response.body).then((body) => ({ kind: 'json', response: { ...answer.response, body } }));
}

// the id the vendor answered a forwarded call with (its request id), for the attempt in the books
// (docs/tenancy-and-billing.md "The books"); made once, not per request
const sentRequestId = (sent: PassthroughResponse): string | undefined => sent.requestId;
const openedRequestId = (opened: OpenedStream): string | undefined => opened.headers['x-request-id'];

// OpenAI's ceiling for `n`; Ark has no `n` (upstreams §2.7), an OpenAI-compatible upstream honours it
const MAX_NATIVE_N = 10;

/**
 * The most images a native image request may be answered with: Ark's group (`max_images`) or an
 * OpenAI-compatible upstream's `n`, whichever is larger (an upstream honours one or the other).
 */
function nativeImagesAsked(groups: NonNullable<Provider['imageGroups']>, body: Record<string, unknown>): number {
  return Math.max(groups.asked(body), readImageCount(body.n, 'n', MAX_NATIVE_N, 'json') ?? 1);
}

const USAGE = Buffer.from('"usage"');

/** The token counts of a JSON answer, parsed only when it has a `usage` object. */
function tokensOfJson(body: Buffer): TokenUsage | undefined {
  if (!body.includes(USAGE)) return undefined;
  try {
    return tokensOfAnswer(parseJsonBody(body));
  } catch {
    return undefined;
  }
}

/** The answer with its `data` list cut to `most` entries. */
function withImagesCut(body: Buffer, most: number): Buffer {
  const parsed = parseJsonBody(body) as { data: unknown[] } & Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...parsed, data: parsed.data.slice(0, most) }));
}

/**
 * The stream answer: a streamed image group is billed by the images its events returned
 * (upstreams §2.6), settled by the ledger when the upstream body closes: ended, failed, or cut by its
 * client (the images the vendor may have made for a cut stream are the caller's, ledger/reckoning.ts).
 */
function streamed(charged: StreamCharge, usage: Usage, stream: OpenedStream, counter: ((chunk: Buffer) => number) | undefined, countsTokens: boolean): ForwardAnswer {
  usage.upstreamRequestId = stream.headers['x-request-id'];
  const tokens = countsTokens ? new StreamTokenReader() : undefined;
  const attempt = usage.attempts?.at(-1);
  let ended = false;
  stream.body.once('end', () => (ended = true));
  const settled = new Promise<Usage>((resolve) => {
    stream.body.once('close', () => {
      if (tokens?.tokens) usage.tokens = tokens.tokens;
      if (attempt && counter) {
        attempt.outcome = ended ? 'made' : 'unknown';
        attempt.images = ended ? usage.images : Math.max(usage.images, usage.imagesAsked ?? 0);
        if (usage.upstreamRequestId) attempt.id = usage.upstreamRequestId;
      }
      const cut = !ended && charged.clientGone();
      if (cut) usage.lostBy = 'stream_cut';
      const end = ended || cut ? { streamed: true } : { error: stream.failure(new Error('the upstream stream closed before its end')), streamed: true };
      void settleBooks(charged.quotas, charged.charge, charged.cost, usage, end).then(() => resolve(usage));
    });
  });
  const observe = (chunk: Buffer): void => {
    if (counter) usage.images = counter(chunk);
    tokens?.take(chunk);
  };
  return { kind: 'stream', stream, observe, settled };
}
