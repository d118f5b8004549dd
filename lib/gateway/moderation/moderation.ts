// The moderation policy at work (docs/content-safety.md): the caller's policy looked up, each stage asked
// of the checker under its deadline, the thresholds applied, one audit event per verdict, strikes
// counted, and the refusals made. Built once by resolveOptions when `moderation` is set; without it
// nothing here runs and the image path awaits nothing more.
import { GatewayConfigError } from '../../errors/config-error.js';
import { ContentPolicyError } from '../../errors/content-policy-error.js';
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ModerationEvent, ModerationImage, ModerationOption, ModerationPolicy, ModerationStage, ModerationVerdict, StrikeLimitEvent } from '../../options/moderation-options.js';
import type { Caller, Logger, RouteName } from '../../types.js';
import { type StrikeCounter, memoryStrikes, redisStrikes } from './strike-counter.js';
import { DEFAULT_REDIS_PREFIX, REDIS_NAMESPACES, type ResolvedRedis } from '../options/redis-option.js';

/** A policy with its defaults filled, as the stages read it. */
export interface ActivePolicy {
  readonly policy: ModerationPolicy;
  readonly prompt: boolean;
  readonly inputImages: boolean;
  readonly outputImages: boolean;
  readonly timeoutMs: number;
  readonly refuseOnError: boolean;
  readonly strikes: StrikeCounter;
  readonly windowMs: number;
}

/** Who and what a check is about. */
export interface ModerationSubject {
  requestId: string;
  caller: Caller;
  route: RouteName;
  model: string;
}

/** How one stage ended: passed, flagged (with its categories), or the checker failed. */
export type StageResult = { kind: 'passed' } | { kind: 'flagged'; categories: readonly string[] } | { kind: 'failed'; refuse: boolean };

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_WINDOW_SECONDS = 86_400;

export class Moderation {
  private readonly active = new WeakMap<ModerationPolicy, ActivePolicy>();
  private readonly memory = memoryStrikes();

  constructor(
    private readonly option: ModerationOption,
    private readonly onModeration: ((event: ModerationEvent) => void) | undefined,
    private readonly logger: Logger,
    /** The `onStrikeLimit` option: one hook for every policy, whichever the caller's is. */
    private readonly onStrikeLimit?: (event: StrikeLimitEvent) => void | Promise<void>,
    /** The `redis` option: strikes are counted there unless a policy names its own `redis` (docs/configuration.md "redis"). */
    private readonly sharedRedis?: ResolvedRedis,
  ) {
    // a fixed policy is checked now, as every option is; a function's policies when it returns them
    if (typeof option !== 'function') this.activate(option);
  }

  /** The caller's policy with its defaults; undefined when the caller has none. */
  policyFor(caller: Caller): ActivePolicy | undefined | Promise<ActivePolicy | undefined> {
    const { option } = this;
    if (typeof option !== 'function') return this.activate(option);
    return Promise.resolve(option(caller)).then((policy) => (policy ? this.activate(policy) : undefined));
  }

  /** 403 `tenant_suspended` for a tenant at its policy's `maxStrikes`. */
  async assertNotSuspended(active: ActivePolicy, caller: Caller): Promise<void> {
    const max = active.policy.maxStrikes;
    if (max === undefined) return;
    if ((await active.strikes.count(caller.id)) < max) return;
    throw new GatewayError({
      status: 403,
      code: ERROR_CODES.tenantSuspended,
      message: 'Image requests of this account are suspended after repeated content policy violations. Contact the operator.',
    });
  }

  /**
   * The input stages, in parallel: each text field in its own check, and the caller's images (fetched
   * only when that stage runs). A flagged one is a 400 naming its field (the first text field flagged,
   * else `image`) and the categories, a failed checker a 503 or nothing.
   */
  async checkInputs(active: ActivePolicy, subject: ModerationSubject, texts: readonly CheckedText[], images: () => Promise<InputImages>): Promise<void> {
    await this.assertNotSuspended(active, subject.caller);
    const checked = active.prompt ? texts.filter(({ text }) => text.trim() !== '') : [];
    const byTexts = Promise.all(checked.map(({ field, role, text }) => this.runStage(active, subject, 'prompt', { field, ...(role !== undefined ? { role } : {}), text })));
    const pictures = active.inputImages
      ? images().then(({ images: list, unfetched }) => {
          // image URLs that could not be fetched go on unchecked only under 'allow' (else their 400 was thrown)
          if (unfetched > 0) this.reportUnfetched(active, subject, unfetched);
          return list.length > 0 ? this.runStage(active, subject, 'inputImages', { images: list }) : undefined;
        })
      : undefined;
    const [textResults, byImages] = await Promise.all([byTexts, pictures]);
    const results = [...textResults, byImages];
    const flagged = results.filter((result): result is Extract<StageResult, { kind: 'flagged' }> => result?.kind === 'flagged');
    if (flagged.length > 0) {
      await this.strike(active, subject.caller);
      const flaggedText = checked.find((_text, index) => textResults[index]!.kind === 'flagged');
      const param = flaggedText?.field ?? 'image';
      const categories = [...new Set(flagged.flatMap((result) => result.categories))];
      throw new ContentPolicyError(`The ${whatIsRefused(param)} was refused by the content policy${categories.length > 0 ? ` (${categories.join(', ')})` : ''}.`, param, categories, 'input');
    }
    if (results.some((result) => result?.kind === 'failed' && result.refuse)) throw unavailable();
  }

  /**
   * The output stage: each image checked on its own, in parallel. `true` for the images that may be
   * answered; an image whose check failed is withheld under 'refuse'. One strike for a request with a
   * flagged image.
   */
  async checkOutputs(active: ActivePolicy, subject: ModerationSubject, images: readonly ModerationImage[]): Promise<OutputVerdicts> {
    const results = await Promise.all(images.map((image) => this.runStage(active, subject, 'outputImages', { images: [image] })));
    const flagged = results.filter((result) => result.kind === 'flagged');
    if (flagged.length > 0) await this.strike(active, subject.caller);
    return {
      passed: results.map((result) => result.kind === 'passed' || (result.kind === 'failed' && !result.refuse)),
      flagged: flagged.length,
      categories: [...new Set(flagged.flatMap((result) => (result.kind === 'flagged' ? result.categories : [])))],
      failed: results.some((result) => result.kind === 'failed' && result.refuse),
    };
  }

  /** One checker call under the policy's deadline, its verdict read against the thresholds, its one event. */
  private async runStage(
    active: ActivePolicy,
    subject: ModerationSubject,
    stage: ModerationStage,
    content: { field?: string; role?: string; text?: string; images?: readonly ModerationImage[] },
  ): Promise<StageResult> {
    const { policy } = active;
    const started = performance.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`the checker did not answer within ${active.timeoutMs} ms`)), active.timeoutMs);
    timer.unref();
    let result: StageResult;
    let categories: readonly string[] = [];
    let checkerError: ModerationEvent['checkerError'];
    try {
      const verdict = await Promise.race([
        Promise.resolve().then(() => policy.check({ stage, caller: subject.caller, route: subject.route, model: subject.model, ...content, signal: controller.signal })),
        new Promise<never>((_resolve, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })),
      ]);
      const judged = judgeVerdict(verdict, policy.thresholds);
      categories = judged.categories;
      result = judged.flagged ? { kind: 'flagged', categories } : { kind: 'passed' };
    } catch (error) {
      result = { kind: 'failed', refuse: active.refuseOnError };
      checkerError = { message: messageOf(error).slice(0, 300), decision: active.refuseOnError ? 'refuse' : 'allow' };
    } finally {
      clearTimeout(timer);
    }
    const flagged = result.kind === 'flagged';
    const event: ModerationEvent = {
      ...subject,
      stage,
      flagged,
      categories,
      checker: checkerNameOf(policy),
      latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
      ...(checkerError ? { checkerError } : {}),
      ...(policy.auditContent && content.text !== undefined ? { text: content.text } : {}),
      ...(policy.auditContent && content.images ? { images: content.images.map((image) => ({ mediaType: image.mediaType, base64: image.bytes.toString('base64') })) } : {}),
    };
    this.report(event);
    return result;
  }

  /** The verdict on caller images that could not be fetched for the check, let through under `onCheckerError: 'allow'`. */
  private reportUnfetched(active: ActivePolicy, subject: ModerationSubject, unfetched: number): void {
    const message = `${unfetched} image URL${unfetched === 1 ? '' : 's'} could not be fetched for the check`;
    this.report({ ...subject, stage: 'inputImages', flagged: false, categories: [], checker: checkerNameOf(active.policy), latencyMs: 0, checkerError: { message, decision: 'allow' } });
  }

  private report(event: ModerationEvent): void {
    const { requestId, caller, route, model, stage, categories, checker, checkerError } = event;
    if (event.flagged) this.logger.warn({ requestId, caller: caller.id, route, model, stage, categories, checker }, 'content flagged by the moderation policy');
    else if (checkerError) this.logger.warn({ requestId, caller: caller.id, route, model, stage, checker, error: checkerError.message, decision: checkerError.decision }, 'content checker failed');
    if (!this.onModeration) return;
    try {
      this.onModeration(event);
    } catch (error) {
      this.logger.error({ requestId, error: messageOf(error) }, 'onModeration threw');
    }
  }

  /** One strike; the host told once when the tenant reaches its limit. A counter that fails is logged, never the request's failure. */
  private async strike(active: ActivePolicy, caller: Caller): Promise<void> {
    const { maxStrikes } = active.policy;
    const { onStrikeLimit } = this;
    if (maxStrikes === undefined) return;
    try {
      const strikes = await active.strikes.add(caller.id, active.windowMs);
      if (strikes !== maxStrikes || !onStrikeLimit) return;
      const event = { caller, strikes, windowSeconds: active.windowMs / 1000, clear: () => active.strikes.clear(caller.id) };
      await Promise.resolve()
        .then(() => onStrikeLimit(event))
        .catch((error: unknown) => this.logger.error({ caller: caller.id, error: messageOf(error) }, 'onStrikeLimit threw'));
    } catch (error) {
      this.logger.error({ caller: caller.id, error: messageOf(error) }, 'moderation strike not counted');
    }
  }

  private activate(policy: ModerationPolicy): ActivePolicy {
    const known = this.active.get(policy);
    if (known) return known;
    checkPolicy(policy);
    // the Redis counters hold no state of their own: policies on one client and prefix count together
    const redis = policy.redis ?? this.sharedRedis?.client;
    const strikes = redis ? redisStrikes(redis, policy.prefix ?? `${this.sharedRedis?.prefix ?? DEFAULT_REDIS_PREFIX}${REDIS_NAMESPACES.strikes}`) : this.memory;
    const active: ActivePolicy = {
      policy,
      prompt: policy.prompt ?? true,
      inputImages: policy.inputImages ?? true,
      outputImages: policy.outputImages ?? false,
      timeoutMs: policy.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      refuseOnError: (policy.onCheckerError ?? 'refuse') === 'refuse',
      strikes,
      windowMs: (policy.strikeWindowSeconds ?? DEFAULT_WINDOW_SECONDS) * 1000,
    };
    this.active.set(policy, active);
    return active;
  }
}

/**
 * One text field of a request, checked on its own (docs/content-safety.md "The stages"): `field` names it
 * as a refusal's `param` does; `role` is the role of its message on chat completions and responses.
 */
export interface CheckedText {
  field: string;
  role?: string;
  text: string;
}

/** The caller's images as fetched for the input check; `unfetched`: URLs that could not be (let through under 'allow'). */
export interface InputImages {
  images: readonly ModerationImage[];
  unfetched: number;
}

/** What checkOutputs found. */
export interface OutputVerdicts {
  /** Per image, in order: may it be answered. */
  passed: boolean[];
  flagged: number;
  categories: string[];
  /** A check failed under 'refuse'. */
  failed: boolean;
}

/**
 * Whether a verdict flags, and the categories it flags (docs/content-safety.md "The checker"): `flagged:
 * true`, or a score at or above its threshold, flags; categories alone never do, since a checker may name
 * them on every verdict (the docs' own example does). The checker's categories are told only when it
 * flagged; the thresholds add the categories whose scores reached them.
 */
export function judgeVerdict(verdict: ModerationVerdict, thresholds: ModerationPolicy['thresholds']): { flagged: boolean; categories: string[] } {
  const names = new Set<string>();
  const byChecker = verdict.flagged === true;
  if (byChecker && Array.isArray(verdict.categories)) for (const name of verdict.categories) if (typeof name === 'string') names.add(name);
  let byScore = false;
  if (thresholds && verdict.scores) {
    for (const [name, threshold] of Object.entries(thresholds)) {
      const score = verdict.scores[name];
      if (typeof score === 'number' && score >= threshold) {
        names.add(name);
        byScore = true;
      }
    }
  }
  return { flagged: byChecker || byScore, categories: byChecker || byScore ? [...names] : [] };
}

/** What a refusal's message calls the field it names: an image route's field by its name, a chat or responses text part by its path. */
function whatIsRefused(param: string): string {
  if (param === 'image') return 'input image';
  return param === 'prompt' || param === 'negative_prompt' ? param : `text at ${param}`;
}

/** 503 `moderation_unavailable`: the checker failed and the policy refuses what it could not check. */
export function unavailable(): GatewayError {
  return new GatewayError({
    status: 503,
    code: ERROR_CODES.moderationUnavailable,
    message: 'The content checker is unavailable, and this request cannot run unchecked. Retry later.',
    retryable: true,
    type: 'server_error',
  });
}

function checkerNameOf(policy: ModerationPolicy): string {
  return policy.check.checkerName ?? (policy.check.name || 'checker');
}

function checkPolicy(policy: ModerationPolicy): void {
  const fix = 'moderation: { check: openAIModeration({ apiKey: process.env.OPENAI_API_KEY! }), outputImages: true }';
  if (policy === null || typeof policy !== 'object' || typeof policy.check !== 'function') {
    throw new GatewayConfigError('moderation_check', 'moderation.check must be a function ({ stage, text, images }) => { flagged, categories }.', fix);
  }
  for (const name of ['timeoutMs', 'maxStrikes', 'strikeWindowSeconds'] as const) {
    const value = policy[name];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw new GatewayConfigError('moderation_value', `moderation.${name} must be a positive number.`, `${name}: ${name === 'timeoutMs' ? 5000 : name === 'maxStrikes' ? 5 : 3600}`);
    }
  }
  if (Object.hasOwn(policy, 'onStrikeLimit')) {
    // the hook is the same for every policy: a top-level option (docs/configuration.md "Old names")
    throw new GatewayConfigError(
      'option_moved',
      'moderation.onStrikeLimit is now the top-level option onStrikeLimit.',
      'createGatewayRouter({ ..., moderation: { check, maxStrikes: 5 }, onStrikeLimit: (event) => support.openCase(event.caller.id) })',
    );
  }
  if (Object.hasOwn(policy, 'redisPrefix')) {
    throw new GatewayConfigError('option_moved', 'moderation.redisPrefix is now moderation.prefix, as in every other Redis store.', "moderation: { check, redis, prefix: 'myapp:strikes:' }");
  }
  if (policy.prefix !== undefined && (typeof policy.prefix !== 'string' || policy.prefix === '')) {
    throw new GatewayConfigError('moderation_value', 'moderation.prefix must be a non-empty string.', "moderation: { check, redis, prefix: 'myapp:strikes:' }");
  }
  if (policy.onCheckerError !== undefined && policy.onCheckerError !== 'refuse' && policy.onCheckerError !== 'allow') {
    throw new GatewayConfigError('moderation_value', "moderation.onCheckerError must be 'refuse' or 'allow'.", "onCheckerError: 'allow'");
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
