// The `moderation`, `onModeration` and `onStrikeLimit` options (docs/content-safety.md): which stages of an image request
// a content checker sees, per tenant, what a refusal and a checker failure do, the audit event of each
// verdict and the strikes that suspend a tenant. Types only; gateway/moderation/ reads them.
import type { Caller, RouteName } from '../types.js';

/** Where in a request a check runs: the caller's text and images before any paid call, the images made after. */
export type ModerationStage = 'prompt' | 'inputImages' | 'outputImages';

/** One image handed to a checker: its bytes and media type (sniffed from the bytes). */
export interface ModerationImage {
  /** `image/png`, `image/jpeg`, ... */
  mediaType: string;
  bytes: Buffer;
  /** The image as a `data:<mediaType>;base64,…` URL (made on each call: a checker that needs it asks). */
  dataUrl(): string;
}

/** What a checker is asked: one stage of one request. */
export interface ModerationCheckInput {
  stage: ModerationStage;
  caller: Caller;
  route: RouteName;
  model: string;
  /**
   * Which text field of the request `text` is (stage `prompt`): each text field the gateway forwards is
   * checked in its own call, so a checker can judge a negative prompt (what to avoid) as one. On the
   * image and video routes: `prompt` (a multimodal request's text items, a video task's text items) or
   * `negative_prompt`. On chat completions and responses that make images: the path of the text part
   * in the body, as a refusal's `param` names it (`instructions`, `input`, `messages[1].content`,
   * `input[0].content[1].text`).
   */
  field?: string;
  /**
   * On chat completions and responses: the role of the message the text is in (`system`, `developer`,
   * `user`, `assistant`, `tool`), as the caller sent it; absent for `instructions` and on the other routes.
   */
  role?: string;
  /** The text of `field` (stage `prompt`). */
  text?: string;
  /** The images (stages `inputImages` and `outputImages`; an output check gets one image per call). */
  images?: readonly ModerationImage[];
  /** Aborted when the policy's `timeoutMs` passes: a checker that makes an HTTP call should pass it on. */
  signal: AbortSignal;
}

/** A checker's answer. */
export interface ModerationVerdict {
  /** The checker's own judgement; the policy's `thresholds` may flag more categories by their scores. */
  flagged: boolean;
  /**
   * The categories' names (`violence`, `sexual/minors`, ...): the caller is told these when `flagged` is
   * true, never scores. They never flag by themselves: a checker may name them on every verdict.
   */
  categories: readonly string[];
  /** Scores by category, 0 to 1, when the checker gives them: the policy's `thresholds` apply to them. */
  scores?: Readonly<Record<string, number>>;
}

/**
 * A content checker: the built-in `openAIModeration(...)`, or any function of the host.
 * @example const check: ModerationChecker = async ({ text }) => ({ flagged: /forbidden/.test(text ?? ''), categories: ['house-rules'] })
 */
export type ModerationChecker = ((input: ModerationCheckInput) => ModerationVerdict | Promise<ModerationVerdict>) & { checkerName?: string };

/** What `onStrikeLimit` hears: a tenant that reached `maxStrikes`; `clear()` lifts the suspension now (an appeal granted). */
export interface StrikeLimitEvent {
  caller: Caller;
  strikes: number;
  windowSeconds: number;
  clear(): Promise<void>;
}

/**
 * The strike counters' Redis client (ioredis's `Redis` fits): several instances then count one tenant's
 * strikes together. The gateway sends EVAL, GET and DEL; it never closes the client.
 * @example redis: new Redis(process.env.REDIS_URL!)
 */
export interface StrikeRedisClient {
  eval(...args: never[]): unknown;
  get(...args: never[]): unknown;
  del(...args: never[]): unknown;
}

/**
 * What is checked for a caller, by which checker, and what a failure of the checker does.
 * @example { check: openAIModeration({ apiKey: process.env.OPENAI_API_KEY! }), prompt: true, inputImages: true, outputImages: true, maxStrikes: 5 }
 */
export interface ModerationPolicy {
  /** Required. The checker. @example check: openAIModeration({ apiKey: process.env.OPENAI_API_KEY! }) */
  check: ModerationChecker;
  /** Check the prompt text before any paid call. Default true. */
  prompt?: boolean;
  /** Check the caller's images (uploads, Data URLs, fetched URLs) before any paid call. Default true. */
  inputImages?: boolean;
  /** Check each image made before any byte of it leaves the gateway. Default false (it costs a check per image and withholds stream partials). */
  outputImages?: boolean;
  /**
   * Per category, the score from which it counts as flagged, whatever the checker's own `flagged` says.
   * @example thresholds: { violence: 0.5, 'sexual/minors': 0.01 }
   */
  thresholds?: Readonly<Record<string, number>>;
  /** When the checker throws or exceeds `timeoutMs`: `'refuse'` (503 `moderation_unavailable`) or `'allow'`. Default `'refuse'`. */
  onCheckerError?: 'refuse' | 'allow';
  /** Longest wait for one check, ms. Default 10 000. */
  timeoutMs?: number;
  /** Put the prompt text and image bytes in the `onModeration` event. Default false. */
  auditContent?: boolean;
  /** Flagged verdicts within `strikeWindowSeconds` after which the tenant gets 403 `tenant_suspended`. Default: no strikes. */
  maxStrikes?: number;
  /** The strike window, seconds: it starts at a tenant's first strike. Default 86 400. */
  strikeWindowSeconds?: number;
  /** An override: a client of its own where strikes are counted across instances. Default: the `redis` option's client, else this process's memory. */
  redis?: StrikeRedisClient;
  /** An override: prepended to the strike keys in Redis. Default `'<redis.prefix>strikes:'` (`'gw:strikes:'`). @example prefix: 'myapp:strikes:' */
  prefix?: string;
}

/**
 * The `moderation` option: one policy for everyone, or one per caller (null: no checks for that caller).
 * @example moderation: (caller) => (caller.plan === 'kids' ? strict : standard)
 */
export type ModerationOption = ModerationPolicy | ((caller: Caller) => ModerationPolicy | null | undefined | Promise<ModerationPolicy | null | undefined>);

/** One verdict, for the host's audit log (`onModeration`). */
export interface ModerationEvent {
  /** The id of the request (its `x-request-id`), or of the task whose output was checked. */
  requestId: string;
  caller: Caller;
  route: RouteName;
  model: string;
  stage: ModerationStage;
  flagged: boolean;
  /** The flagged categories (thresholds applied). */
  categories: readonly string[];
  /** The checker's name (`openai-moderation` for the built-in one, the function's name otherwise). */
  checker: string;
  latencyMs: number;
  /** The checker failed or timed out: what `onCheckerError` then did. */
  checkerError?: { message: string; decision: 'refuse' | 'allow' };
  /** Only with `auditContent: true`: the text checked. */
  text?: string;
  /** Only with `auditContent: true`: the images checked. */
  images?: ReadonlyArray<{ mediaType: string; base64: string }>;
}
