// Per-request state every route shares: which route, model and provider, an AbortSignal that fires
// when the client disconnects, and one usage report (onUsage) when the response closes.
import type { Request, RequestHandler, Response } from 'express';
import type { ResolvedOptions } from '../gateway/options.js';
import type { CallRecord } from '../gateway/call-record.js';
import { gatewayCaller } from './authenticate.js';
import { isHeld, whenRequestDone, whenResponseCloses } from './request-lifetime.js';
import type { RouteName } from '../types.js';
import type { RequestTrace } from '../telemetry/telemetry.js';
import { dispatchedRouteOf } from './dispatch.js';
import type { CancelSignal } from '../transport/upstream-http.js';

/** The use cases' CallRecord, plus what only the inbound side knows. The signal is created on first use. */
export interface RouteState extends CallRecord {
  route: RouteName;
  startedAt: number;
  /** The `error.code` of the GatewayError the request ended with (set by the error middleware), for the usage event. */
  errorCode?: string;
  /**
   * True when the answer is an Idempotency-Key replay: nothing was billed, no usage event, and the
   * request's span gets `image_gateway.idempotent_replay` (README "Observability").
   */
  replayed?: boolean;
  /** The status of an Idempotency-Key answer that was kept for the retry although its client had left. */
  keptStatus?: number;
  /** The request's server span (README "Observability"); absent when nothing is traced. */
  readonly trace?: RequestTrace;
}

// Express sets statusCode 200 before anything is sent; nginx's 499 says "client closed the request".
const CLIENT_CLOSED = 499;

export function beginRoute(route: RouteName, options: ResolvedOptions): RequestHandler {
  return (req, res, next) => {
    const state = new RouteRecord(route, req, res, options);
    states.set(res, state);
    // on the request lifetime's one 'close' listener, not a listener of its own (issue 15)
    whenResponseCloses(res, () => state.closed());
    // reported when the request is done: at the close, or when held work finished after it
    whenRequestDone(res, () => state.report());
    next();
  };
}

/**
 * One request's state as a class: an object literal with a getter and the closures around it cost
 * a slow-mode object and several allocations per request on the hot path (issue 15).
 */
class RouteRecord implements RouteState {
  model = '';
  images = 0;
  provider?: RouteState['provider'];
  upstreamRequestId?: string;
  upstreamImages?: number;
  imageSizes?: string[];
  upstreamUsage?: RouteState['upstreamUsage'];
  storedBytes?: number;
  rateLimit?: RouteState['rateLimit'];
  errorCode?: string;
  replayed?: boolean;
  keptStatus?: number;
  readonly startedAt = performance.now();
  readonly trace: RequestTrace | undefined;
  readonly clientGone: ClientGoneWatch;
  // most requests finish without the client leaving: the controller is made only when asked for,
  // and upstream calls listen on the plain clientGone watch instead
  private controller?: AbortController;

  constructor(
    readonly route: RouteName,
    req: Request,
    private readonly res: Response,
    private readonly options: ResolvedOptions,
  ) {
    this.trace = options.telemetry.startRequest(route, req.method, () => httpRouteOf(req));
    this.clientGone = new ClientGoneWatch(res);
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (clientLeft(this.res)) this.controller.abort();
    return this.controller.signal;
  }

  /** The response closed. */
  closed(): void {
    // an Idempotency-Key create keeps working after its client left: its answer is kept for the retry
    if (!this.res.writableFinished && !isHeld(this.res)) {
      this.controller?.abort();
      this.clientGone.fire();
    }
  }

  /** The request is done: its span and metric, and the usage event. */
  report(): void {
    const { res, options, route } = this;
    const finished = res.writableFinished;
    const status = finished ? res.statusCode : (this.keptStatus ?? CLIENT_CLOSED);
    const latencyMs = Math.round((performance.now() - this.startedAt) * 1000) / 1000;
    options.telemetry.endRequest(this.trace, {
      route,
      status,
      errorCode: this.errorCode,
      model: this.model,
      provider: this.provider,
      images: this.images,
      durationMs: latencyMs,
      idempotentReplay: this.replayed,
    });
    const caller = gatewayCaller(res);
    // usage is per caller: a request that never authenticated has nobody to bill
    if (!options.onUsage || !caller || this.replayed) return;
    try {
      options.onUsage({
        caller,
        route,
        model: this.model,
        provider: this.provider,
        images: this.images,
        ...(this.upstreamImages !== undefined ? { upstreamImages: this.upstreamImages } : {}),
        status,
        latencyMs,
        upstreamRequestId: this.upstreamRequestId,
        ...(this.errorCode !== undefined ? { errorCode: this.errorCode } : {}),
        ...(this.storedBytes !== undefined ? { storedBytes: this.storedBytes } : {}),
        ...(this.imageSizes !== undefined ? { imageSizes: this.imageSizes } : {}),
        ...(this.upstreamUsage !== undefined ? { upstreamUsage: this.upstreamUsage } : {}),
      });
    } catch (error) {
      options.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'onUsage threw');
    }
  }
}

/** The client left before the answer was finished, and no held work keeps the request going. */
function clientLeft(res: Response): boolean {
  return res.destroyed && !res.writableFinished && !isHeld(res);
}

/** `http.route`: the mount path and the route's pattern (`/v1/images/generations`, `/api/v3/contents/generations/tasks/:id`). */
function httpRouteOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path ?? dispatchedRouteOf(req);
  return `${req.baseUrl}${typeof path === 'string' ? path : ''}`;
}

// module-private, not res.locals.gateway: a host's own locals key of that name cannot collide with it
const states = new WeakMap<Response, RouteState>();

/** The state beginRoute set. Every route handler runs after it, so it is always there. */
export function routeStateOf(res: Response): RouteState {
  const state = states.get(res);
  if (!state) throw new Error('routeStateOf: the handler runs before beginRoute');
  return state;
}

/** The state, when the response belongs to a gateway route (for helpers that also run elsewhere). */
export function findRouteState(res: Response): RouteState | undefined {
  return states.get(res);
}

/**
 * The client-gone event as upstream calls use it (CancelSignal): a flag and a listener list, fired
 * from the response's 'close' handler beginRoute adds anyway. Aborted also when asked after the
 * client left, as the lazily made AbortController is.
 */
class ClientGoneWatch implements CancelSignal {
  private fired = false;
  // usually one listener (the upstream call's): made with it, one slot, not [] then push (17)
  private listeners: Array<() => void> | undefined;

  constructor(private readonly res: Response) {}

  get aborted(): boolean {
    return this.fired || clientLeft(this.res);
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
