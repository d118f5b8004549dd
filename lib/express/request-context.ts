// One request's context (docs/architecture.md "One request context"): made when a route begins and
// held in one place, then handed as a parameter to the guards and writers that need it. It carries
// the route and its declared path, the caller once authenticated, the lifetime of the request and
// its holds, the slow-reader policy, the body fingerprint, the answer recorder of an Idempotency-Key
// request, the trace, and the usage the request's one usage event reports when it is done.
// express's Request and Response under names of their own, apart from Node's global (fetch) ones:
// gatewayCaller's rolled-up declaration must name express's (scripts/package-entries.ts)
import type { Request as ExpressRequest, RequestHandler, Response as ExpressResponse } from 'express';
import type { ResolvedOptions } from '../gateway/resolve-options.js';
import type { Cancellation, EndedWork, KeptWork, Usage } from '../gateway/use-case.js';
import type { RequestTrace } from '../telemetry/telemetry.js';
import type { CancelSignal } from '../transport/upstream-http.js';
import type { Caller, RouteName } from '../types.js';
import type { Logger } from '../options/host-hooks.js';
import { RequestLifetime } from './request-lifetime.js';
import { requestIdOf } from '../errors/request-id.js';
import { preferenceOf } from './prefer-header.js';

/** The seam between the answer writers and the Idempotency-Key guard: what a kept answer needs. */
export interface AnswerRecorder {
  /** Largest body kept; a writer of a larger one passes no body, only its size. */
  readonly maxBytes: number;
  record(status: number, contentType: string, body: Buffer | string | undefined, bytes: number): void;
  /** The request failed (the error middleware got an error), whether or not an answer can still be sent. */
  fail(): void;
  /** The request failed with a refusal of work it made and paid (an output refusal): kept like an answer, when the recorder keeps one. */
  keepRefusal?(status: number, contentType: string, body: string): void;
}

/** A whole answer as it would be written. */
export interface KeptAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

// Express sets statusCode 200 before anything is sent; nginx's 499 says "client closed the request".
const CLIENT_CLOSED = 499;

/**
 * Starts the context of every request of a gateway route (`route` undefined for the paths with no
 * usage event: `/v1/models`, stored results, the JSON 404). Named, as every middleware of the
 * router is, so stack traces and profiles say where they are. `quotes`: the route answers
 * `Prefer: dry-run` with a quote (docs/tenancy-and-billing.md "Quotes before work").
 */
export function beginRequest(route: RouteName | undefined, options: ResolvedOptions, quotes = false): RequestHandler {
  return function beginGatewayRequest(req, res, next) {
    contexts.set(res, new RequestContext(route, req, res, options, quotes));
    next();
  };
}

/**
 * A class, not an object literal with getters and closures: a slow-mode object and several
 * allocations per request cost measurable time on the hot path (docs/architecture.md "Performance").
 */
export class RequestContext implements Cancellation {
  /** What the request did: the route's model until a use case hands back its own (then the same object, updated while a stream runs). */
  usage: Usage = { model: '', images: 0 };
  caller?: Caller;
  /** The `error.code` of the GatewayError the request ended with (set by the error middleware). */
  errorCode?: string;
  /** What the request failed with (set by the error middleware): the ledger reads whether the vendor may have made its work. */
  failure?: unknown;
  /**
   * The work's answer was kept for the client's retry (idempotency/kept-work.ts): its images are not charged on
   * this request's event, but on the event that delivers them, or on their expiry.
   */
  keptForRetry = false;
  /** The request asked for a stream (`stream: true`): its images are received one by one, as they are sent. */
  streaming = false;
  /** The kept work this request delivered (kept-work.ts): its usage event charges it. */
  keptDelivery?: KeptWork;
  /** The answer is an Idempotency-Key replay: nothing was billed, no usage event, the span marked. */
  replayed?: boolean;
  /** The status of an Idempotency-Key answer kept for the retry although its client had left. */
  keptStatus?: number;
  /** The body's fingerprint, when the JSON parser hashed the bytes it read (Idempotency-Key). */
  fingerprint?: string;
  /** Set by the Idempotency-Key guard: every writer hands it the exact answer it sends. */
  recorder?: AnswerRecorder;
  /** Set by the Idempotency-Key guard: given the use case's usage as it starts, for the key's lease (gateway/kept-work/leased-work.ts). */
  tracker?: (usage: Usage) => void;
  /**
   * Set by the kept-work guard (kept-work.ts): takes the answer of work that goes on after the
   * caller was answered (a missed deadline), to keep it for the retry, and that deadline (`answerMs`):
   * a retry that joins the work waits no longer. Once called, `workKept` is true.
   */
  keepLate?: (answer: Promise<KeptAnswer | undefined>, answerMs?: number) => void;
  /** Late work of this request is kept for the client's retry: its error answer says to retry. */
  workKept = false;
  /**
   * The request asks for a quote (`Prefer: dry-run`) on a route that gives one: it takes no
   * Idempotency-Key and no kept work, runs nothing upstream, and has no usage event (not billable).
   */
  readonly dryRun: boolean;
  readonly startedAt = performance.now();
  readonly trace: RequestTrace | undefined;
  readonly lifetime: RequestLifetime;
  readonly clientGone: ClientGoneWatch;
  /** Slow readers are cut after this long without progress (limits.clientStallMs). */
  readonly stallMs: number;
  readonly logger: Logger;
  // most requests finish without the client leaving: the controller is made only when asked for
  private controller?: AbortController;

  /** The request's id in log lines and in the `x-request-id` header of an error answer (made when first asked). */
  get requestId(): string {
    return requestIdOf(this.req);
  }

  constructor(
    readonly route: RouteName | undefined,
    readonly req: ExpressRequest,
    readonly res: ExpressResponse,
    private readonly options: ResolvedOptions,
    quotes: boolean,
  ) {
    // most requests carry no Prefer header: nothing is parsed for them
    this.dryRun = quotes && req.headers.prefer !== undefined && preferenceOf(req.headers).dryRun;
    this.stallMs = options.limits.clientStallMs;
    this.logger = options.logger;
    this.trace = route ? options.telemetry.startRequest(route, req.method, () => httpRouteOf(req)) : undefined;
    this.lifetime = new RequestLifetime(res);
    this.clientGone = new ClientGoneWatch(this);
    this.lifetime.whenResponseCloses(() => this.closed());
    if (route) this.lifetime.whenRequestDone(() => this.report());
    this.lifetime.whenRequestDone(() => {
      this.requestDone = true;
      if (this.workEnded) this.release();
    });
  }

  /** The response closed with no hold left (request-lifetime.ts). */
  private requestDone = false;
  /** The route's chain reached its end: its handler settled, or the error middleware took its failure. */
  private workEnded = false;

  /**
   * The route's chain is over: nothing of it will look for the context again. A middleware that
   * answers on its own (a replay, a host's refusal) never says so, and its context stays with the
   * response, as every context did.
   */
  endWork(): void {
    if (this.workEnded) return;
    this.workEnded = true;
    if (this.requestDone) this.release();
  }

  /**
   * A done request whose work has ended lets go of its context once every 'close' listener has run (a
   * host's may still read gatewayCaller(res)). Express gives each req and res a new prototype, which
   * V8 keeps alive through young-generation collections, and all the context holds survived with
   * them: half the chat route's collection time (docs/architecture.md "Performance"). Not before the
   * work ends: a failure that comes after the client left still reaches the error middleware, the
   * usage event and the Idempotency-Key's recorder through this context.
   */
  private release(): void {
    const res = this.res;
    queueMicrotask(() => {
      if (contexts.get(res) === this) contexts.delete(res);
    });
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.clientLeft()) this.controller.abort();
    return this.controller.signal;
  }

  /** The client left before the answer was finished, and no held work keeps the request going. */
  clientLeft(): boolean {
    return this.res.destroyed && !this.res.writableFinished && !this.lifetime.held;
  }

  /**
   * The request failed after an upstream may have started paid work (an error that was not a refusal
   * before work began, or a client that left): set by the error middleware and on a lost client.
   */
  workMayHaveStarted = false;

  /**
   * Work whose books the usage event waits for while it runs: the route's use case (a client that
   * leaves closes the response before the work it started has ended), a stream's settlement (when its
   * upstream body closes). Undefined once all of it is done, so most requests bill at once.
   */
  private books?: Promise<void>;

  /** The usage event goes out once `work` is done too (its failure is the route's own, handled there). */
  awaitBooks(work: Promise<unknown>): void {
    // the books are read only by a usage event and by quotas to settle (bill): with neither, no
    // request keeps a promise and two closures for them
    if (this.options.onUsage === undefined && this.options.quotas === undefined) return;
    const before = this.books;
    const books: Promise<void> = (before ? Promise.all([before, work]) : work).then(
      () => this.doneWith(books),
      () => this.doneWith(books),
    );
    this.books = books;
  }

  private doneWith(books: Promise<void>): void {
    if (this.books === books) this.books = undefined;
  }

  /** Takes a use case's usage as the request's (by reference: a stream's keeps counting as it is relayed). */
  recordUsage(usage: Usage): void {
    this.usage = usage;
  }

  /**
   * `x-request-cost: <amount> <currency>` on a whole answer of a priced model, before it is written:
   * what its usage event's `cost` will say (docs/tenancy-and-billing.md "Cost in money"). Streams and
   * video tasks end later; their cost is on the usage event only.
   */
  announceCost(): void {
    if (!this.options.pricing || this.res.headersSent) return;
    const cost = this.options.books.costHeader(this.usage);
    if (cost) this.res.setHeader('x-request-cost', cost);
  }

  private closed(): void {
    // an Idempotency-Key create keeps working after its client left: its answer is kept for the retry
    if (!this.res.writableFinished && !this.lifetime.held) {
      this.controller?.abort();
      this.clientGone.fire();
    }
  }

  /** The request is done: its span and metric, and the usage event. */
  private report(): void {
    const { res, options, usage } = this;
    const route = this.route!;
    const status = res.writableFinished ? res.statusCode : (this.keptStatus ?? CLIENT_CLOSED);
    const latencyMs = Math.round((performance.now() - this.startedAt) * 1000) / 1000;
    options.telemetry.endRequest(this.trace, {
      route,
      status,
      errorCode: this.errorCode,
      model: usage.model,
      provider: usage.provider,
      images: usage.images,
      tenant: this.caller?.id,
      durationMs: latencyMs,
      idempotentReplay: this.replayed,
    });
    // whether the answer reached the client is decided now: a write after this (kept work) reached nobody
    const finished = res.writableFinished || this.keptStatus !== undefined;
    if (this.books) void this.books.then(() => this.bill(route, status, latencyMs, finished));
    else this.bill(route, status, latencyMs, finished);
  }

  /** The request handed to the books (ledger/work-books.ts): they settle its charge when late, and emit its one usage event. */
  private bill(route: RouteName, status: number, latencyMs: number, finished: boolean): void {
    const { options, usage } = this;
    // usage is per caller: a request that never authenticated has nobody to bill; a quote bills nothing
    const reports = options.onUsage !== undefined && this.caller !== undefined && !this.replayed && !this.dryRun;
    if (!reports && !usage.settleLater) return;
    // never rejects: a settlement that fails is logged by the books
    void options.books.close({
      caller: this.caller,
      route,
      requestId: this.requestId,
      status,
      latencyMs,
      errorCode: this.errorCode,
      usage,
      end: this.workEnd(finished),
      ...(this.keptDelivery ? { kept: { work: this.keptDelivery, how: 'delivered' } } : {}),
      reports,
    });
  }

  /** How the request's work ended, as the inbound side saw it: facts only, the books decide what they cost (ledger/reckoning.ts). */
  private workEnd(finished: boolean): EndedWork['end'] {
    // a stream's images went out one by one: those sent were received, and a stream whose answer did
    // not reach its end was cut
    const streamed = this.streaming;
    return {
      ...(this.failure !== undefined ? { error: this.failure } : {}),
      clientLeft: !finished && !streamed,
      kept: this.keptForRetry,
      streamed,
      ...(streamed && !finished ? { cut: true } : {}),
      // a read (a task query) is no billable request: no per-request fee
      noFee: this.req.method !== 'POST',
    };
  }
}

/** `http.route`: the mount path and the route's declared pattern, never the caller's spelling of it. */
function httpRouteOf(req: ExpressRequest): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return `${req.baseUrl}${typeof path === 'string' ? path : ''}`;
}

/**
 * The client-gone event as upstream calls use it (CancelSignal): a flag and a listener list, fired
 * from the response's one 'close' handler. Aborted also when asked after the client left, as the
 * lazily made AbortController is.
 */
class ClientGoneWatch implements CancelSignal {
  private fired = false;
  // usually one listener (the upstream call's): made with it, one slot, not [] then push
  private listeners: Array<() => void> | undefined;

  constructor(private readonly context: RequestContext) {}

  get aborted(): boolean {
    return this.fired || this.context.clientLeft();
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  fire(): void {
    if (this.fired) return;
    this.fired = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}

// The one place a request's context is held: keyed by the response, so it lives exactly as long as
// the request, and nothing outside this module can set or replace it (a host's res.locals key of
// any name cannot collide with it).
const contexts = new WeakMap<ExpressResponse, RequestContext>();

/** The context beginRequest made. Every gateway middleware after it runs with one. */
export function contextOf(res: ExpressResponse): RequestContext {
  const context = contexts.get(res);
  if (!context) throw new Error('contextOf: the middleware runs before beginRequest');
  return context;
}

/** The context, when the response belongs to a gateway route (the error middleware also sees host errors). */
export function findContext(res: ExpressResponse): RequestContext | undefined {
  return contexts.get(res);
}

/**
 * A middleware that needs the context, with the context as its first parameter: looked up once, at
 * the middleware's entry, and passed on from there. `name` names the function for stack traces.
 */
export function withContext(name: string, guard: (context: RequestContext, next: (error?: unknown) => void) => void): RequestHandler {
  const middleware: RequestHandler = (_req, res, next) => guard(contextOf(res), next);
  Object.defineProperty(middleware, 'name', { value: name });
  return middleware;
}

/**
 * The caller the gateway authenticated for this response (what verifyKey returned), or undefined
 * when the request did not reach the gateway or its key was refused. For the host's own middleware
 * (logging, metering), e.g. in `res.on('finish', ...)`; read it there or earlier: after the
 * response's `close` listeners have run and the request's work has ended, it is undefined.
 */
export function gatewayCaller(res: ExpressResponse): Caller | undefined {
  return contexts.get(res)?.caller;
}
