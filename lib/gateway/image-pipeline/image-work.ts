// One image request's work as it passes the stages of the image pipeline (docs/architecture.md "The image
// pipeline"): what each stage reads and what it leaves for the next. A stage is one file of stages/ and
// one line in the list of image-stages.ts.
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import type { PassthroughResponse } from '../../providers/provider.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { QuotaCost } from '../tenancy/quota-cost.js';
import type { QuotaCharge } from '../tenancy/quotas.js';
import type { Quoted } from '../tenancy/quote.js';
import type { Outcome, Usage } from '../use-case.js';
import type { ImageRequest, Prepared } from './image-preparation.js';
import type { ImageStreamEvent, RelayedImages } from './image-streams.js';
import type { Attempted } from './image-upstream-calls.js';

/** What an image request is answered: whole, as a stream, or a quote. */
export type ImageAnswer =
  /** The OpenAI-compatible upstream's answer, relayed as it came (`data` cut to the `n` asked for). */
  | { kind: 'passthrough'; response: PassthroughResponse }
  /** The contract §2.4 answer; `images` are the downloaded bytes when b64_json was asked for. */
  | { kind: 'image'; response: ImageGenerationResponse; images?: Array<Buffer | undefined> }
  /** A stream: an upstream's own OpenAI image events to relay, its charge settled when its body closed. */
  | { kind: 'relay'; relayed: RelayedImages }
  /** A stream: the events the gateway writes (its charge settled once the last was taken or it stopped). */
  | { kind: 'events'; events: AsyncGenerator<ImageStreamEvent> }
  /** A dry run: what the request would cost and reserve; nothing was sent or charged. */
  | Quoted;

/** An answer in one piece: the only kinds a request without `stream` gets. */
export type WholeAnswer = Extract<ImageAnswer, { kind: 'passthrough' | 'image' }>;

/** The work of one image request: the request, then what each stage has made of it so far. */
export interface ImageWork {
  readonly deps: GatewayDeps;
  readonly usage: Usage;
  readonly request: ImageRequest;
  /** After `prepare`: the row, the request as read, the upstreams, the images charged. */
  prepared?: Prepared;
  /** After `charge`: what was taken, for a stream that settles by the images it delivered. */
  charged?: { charge: QuotaCharge; cost: QuotaCost };
  /** After `call`: what the upstream answered, whole or as an opened stream. */
  attempted?: Attempted;
  /** After `results`: the answer in one piece, capped, with the bytes downloaded for b64_json. */
  whole?: WholeAnswer;
  /** The bytes known of each image (downloaded, or fetched by the output check), which `store` writes as they are. */
  bytes?: Array<Buffer | undefined>;
  /**
   * Set by `provenance` when it hands on as bytes the images an OpenAI-compatible upstream answered by
   * URL (read, or signed, there): `store` answers them by URL alone, as the upstream did.
   */
  urlsAsBytes?: boolean;
  /** After `answer`: what the caller is answered. */
  answer?: ImageAnswer;
  /** Set by `charge`: the outcome with the books settled (or to be settled by the stream). */
  outcome?: Outcome<ImageAnswer>;
}

/** One stage: does its part of the work, and calls `next` for the rest of the list (a stage that wraps the rest, such as the charge, awaits it). */
export interface ImageStage {
  readonly name: ImageStageName;
  /**
   * What the stage has work for, when not for every request: a router with the `moderation`, the
   * `provenance` or the `storage` option, or a streamed request (`stream`). Data, not a function: the stage lists of a
   * router are made once from it (image-stages.ts), and a stage with nothing to do is not run at all.
   */
  readonly only?: 'moderation' | 'provenance' | 'storage' | 'stream';
  run(work: ImageWork, next: () => Promise<void>): Promise<void>;
}

/** The stages, by name, in the order they run (image-stages.ts). */
export type ImageStageName = 'prepare' | 'moderate-input' | 'charge' | 'call' | 'results' | 'moderate-output' | 'provenance' | 'store' | 'answer';
