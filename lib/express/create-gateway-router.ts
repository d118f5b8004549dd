// createGatewayRouter(options): the Express router that serves the gateway (docs/architecture.md). Options are
// resolved and schemas compiled here, once; each route is begin -> auth -> body -> handler, and one
// error middleware renders every failure. Paths it does not serve fall through to the host.
import express, { type RequestHandler, type Router } from 'express';
import { createAuthenticate } from './authenticate.js';
import { createErrorMiddleware } from './error-middleware.js';
import { UpstreamHttp } from '../transport/upstream-http.js';
import { healthReads } from '../gateway/routing/health-reads.js';
import { limitCallerInFlight, createInFlightLimiter } from './caller-in-flight.js';
import { createJsonBody } from './body/json-body.js';
import { createMultipartBody } from './body/multipart-body.js';
import { createEditBody } from './body/edit-body.js';
import { resolveOptions } from '../gateway/resolve-options.js';
import type { GatewayOptions } from '../options/gateway-options.js';
import { forwardJsonHandler } from './routes/forward-json.js';
import { imageEditsHandler } from './routes/image-edits.js';
import { imageGenerationsHandler } from './routes/image-generations.js';
import type { GatewayDeps } from '../gateway/gateway-deps.js';
import type { Caller, RouteName } from '../types.js';
import { tenantPrefix } from '../stores/results/result-keys.js';
import { STORED_RESULTS_PATH, storedResultsHandler } from './routes/stored-results.js';
import { beginRequest } from './request-context.js';
import { routeChain } from './route-handler.js';
import { chatCompletionsSchema, createAssetSchema, nativeImageSchema, responsesSchema } from '../schemas/forward-schemas.js';
import { createAssetHandler } from './routes/create-asset.js';
import { imageGenerationSchema } from '../schemas/image-generation-schema.js';
import { videoTaskSchema } from '../schemas/video-task-schema.js';
import { createVideoTaskHandler, queryVideoTaskHandler } from './routes/video-tasks.js';
import { OpenAiVideos } from '../gateway/video-tasks/openai-videos.js';
import { createVideoHandler, deleteVideoHandler, listVideosHandler, retrieveVideoHandler, unofferedVideoHandler, videoContentHandler } from './routes/openai-videos.js';
import { createTaskService } from '../gateway/task-kinds.js';
import { cancelImageTaskHandler, queryImageTaskHandler } from './routes/image-tasks.js';
import { createSchemaCompiler } from '../schemas/validator.js';
import { listModelsHandler } from './routes/list-models.js';
import { GATEWAY_PREFIXES, notFoundHandler } from './routes/not-found.js';
import { KeptWorkKeeper } from '../gateway/kept-work/kept-work-keeper.js';
import { startTaskJobs } from '../gateway/tasks/task-jobs.js';
import { Quotas } from '../gateway/tenancy/quotas.js';
import type { QuotaState } from '../options/quota-options.js';
import { createIdempotency } from './idempotency/idempotency.js';
import { LapsedKeys } from '../gateway/kept-work/lapsed-keys.js';
import { createKeptWork } from './idempotency/kept-work.js';
import { hostMiddleware } from './host-middleware.js';
import type { UpstreamHealthReport } from '../options/routing-options.js';
import type { DeliveriesApi } from '../gateway/deliveries/delivery-log.js';
import { VendorWebhookCalls } from '../gateway/vendor-webhooks/vendor-webhook-calls.js';
import { VENDOR_WEBHOOK_ROUTE } from '../gateway/vendor-webhooks/vendor-webhook-urls.js';
import { vendorWebhookHandler } from './routes/vendor-webhooks.js';
import { enableEndpointHandler, listDeliveriesHandler, replayDeliveriesHandler, replayDeliveryHandler, retrieveDeliveryHandler } from './routes/deliveries.js';

export interface GatewayRouter extends Router {
  /** Stops timers and pollers and frees pooled upstream sockets. Safe to call twice. */
  close(): Promise<void>;
  /**
   * Deletes every stored result of a tenant (`storage` option; a tenant that leaves). Resolves with
   * how many objects were deleted; 0 without storage.
   * @example await router.deleteResults({ id: 'tenant-a' })
   */
  deleteResults(caller: Pick<Caller, 'id'>): Promise<number>;
  /** The caller's configured quotas with what is left of each now (docs/tenancy-and-billing.md); [] without quotas. */
  quota(caller: Caller): Promise<QuotaState[]>;
  /**
   * Each upstream this instance has called: its breaker state, consecutive failures, latency estimate
   * and, when open, until when (docs/routing-and-health.md). Keys appear as hashes, never as keys.
   * @example router.health().filter((upstream) => upstream.state !== 'closed')
   */
  health(): UpstreamHealthReport[];
  /**
   * The delivery log (docs/video-tasks-and-callbacks.md "Delivery log"): every callback delivery and
   * its attempts, for every tenant; replays send the recorded body again under the same webhook-id.
   * Endpoints a run of failures disabled are enabled again here (`deliveries.enable`).
   * @example await router.deliveries.replayAll({ tenant: 'tenant-a', state: 'failed', since: Date.now() - 3600_000 })
   */
  deliveries: DeliveriesApi;
}

export function createGatewayRouter(options: GatewayOptions): GatewayRouter {
  const resolved = resolveOptions(options);
  const compile = createSchemaCompiler();
  const { telemetry } = resolved;
  // the facade's own method, bound once: no closure of the router's runs on each upstream call
  const http = new UpstreamHttp({ sockets: resolved.limits.upstreamSockets, queue: resolved.limits.upstreamQueue }, telemetry.enabled ? telemetry.inject.bind(telemetry) : undefined);
  // after a cooldown, the trial of an upstream whose vendor has a free read is that read (docs/routing-and-health.md "The trial")
  resolved.routing.readWith(healthReads(http, resolved.limits));
  const quotas = new Quotas(resolved.quotas, resolved.logger, resolved.callbacks.maxFollowMs, resolved.ledger);
  const deps: GatewayDeps = {
    options: resolved,
    http,
    imageRules: {
      validate: compile(imageGenerationSchema),
      limits: resolved.limits,
      allowPrivateImageUrls: resolved.allowPrivateImageUrls,
    },
    quotas,
  };
  // every route: the key checked, then one of the caller's in-flight slots taken (no tenant can starve
  // another); slow readers are cut after clientStallMs by the writers (client-stall.ts)
  const authenticate: RequestHandler[] = [
    createAuthenticate(resolved),
    limitCallerInFlight(resolved.limits.inFlightPerCaller, createInFlightLimiter(resolved.limits.inFlightPerCaller), resolved.quotas ? quotas : undefined),
    // the host's own middleware with the caller known (its rate limiter, audit, plan checks), before any body is read
    ...resolved.afterAuthentication.map((middleware) => hostMiddleware(middleware, resolved.logger)),
  ];
  const jsonBody = createJsonBody(resolved);
  // the image route keeps long Data URLs in the body's bytes (docs/architecture.md "Performance": memory ≤ 2x the body)
  // and, with kept work on, the image route hashes every body: a retry is found by it (kept-work.ts)
  const imageJsonBody = createJsonBody(resolved, { imageDataUrls: true, fingerprintAll: resolved.idempotency?.keptAnswerMs !== undefined });

  const multipartBody = createMultipartBody(resolved.limits, resolved.logger);
  // edits come as a form or as JSON with images by URL (docs/routes.md "Edits as JSON"); kept work finds a retry by the JSON bytes too
  const editBody = createEditBody(multipartBody, createJsonBody(resolved, { fingerprintAll: resolved.idempotency?.keptAnswerMs !== undefined }));
  // every kind of task, image and video, through one service (docs/architecture.md "One task lifecycle, a kind per executor")
  const tasks = createTaskService(deps);
  // the vendors' calls back when a task ends, a hint that reads the task now (vendorWebhooks; vendor-webhooks/)
  const vendorCalls = resolved.vendorWebhooks ? new VendorWebhookCalls(deps, resolved.vendorWebhooks, tasks) : undefined;
  // OpenAI's videos API: a second wire shape over the same task service (docs/openai-videos.md)
  const videos = new OpenAiVideos(resolved, tasks);
  // Idempotency-Key requests whose instance stopped: found by their lease's watch (lapsed-keys.ts)
  const lapsedKeys = new LapsedKeys(deps);
  // work kept for a client's retry (kept-work-keeper.ts): the image routes' guard keeps it, the scheduler expires it
  const keptWork = new KeptWorkKeeper(resolved, quotas);
  // the jobs of tasks (polls, watches, follows), deliveries, kept answers and keys' leases start now; a failure to start (Redis down) is logged, requests still work
  const started = startTaskJobs(resolved, http, [tasks, keptWork.expiry, lapsedKeys]).catch((error: unknown) => {
    resolved.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the task scheduler did not start');
  });
  // no RouteName (it is a closed public union) and no upstream call: authenticated, but no usage event
  const unrouted = beginRequest(undefined, resolved);
  // the billable creates answer `Prefer: dry-run` with a quote (docs/tenancy-and-billing.md "Quotes before work")
  const json = (route: RouteName, body = jsonBody, quotes = false): RequestHandler[] => [beginRequest(route, resolved, quotes), ...authenticate, body];
  // the paid creates: an Idempotency-Key is checked once the body is read (idempotency.ts)
  const paid = (route: RouteName, body = jsonBody, quotes = true): RequestHandler[] => [...json(route, body, quotes), createIdempotency(route, resolved, lapsedKeys)];

  // the POST routes, each a chain of named handlers: begin (the request's context), authenticate, the
  // in-flight cap, the body, Idempotency-Key on the paid creates, the route handler
  const posts = new Map<string, RequestHandler[]>([
    [
      '/v1/images/generations',
      [...paid('images.generations', imageJsonBody), createKeptWork('images.generations', resolved, keptWork), imageGenerationsHandler(deps, { service: tasks, always: false })],
    ],
    ['/v1/images/generations/async', [...paid('images.generations', imageJsonBody), imageGenerationsHandler(deps, { service: tasks, always: true })]],
    [
      '/v1/images/edits',
      [
        beginRequest('images.edits', resolved, true),
        ...authenticate,
        editBody,
        createIdempotency('images.edits', resolved, lapsedKeys),
        createKeptWork('images.edits', resolved, keptWork),
        imageEditsHandler(deps, { service: tasks, always: false }),
      ],
    ],
    [
      '/v1/images/edits/async',
      [beginRequest('images.edits', resolved, true), ...authenticate, editBody, createIdempotency('images.edits', resolved, lapsedKeys), imageEditsHandler(deps, { service: tasks, always: true })],
    ],
    ['/v1/images/tasks/:id/cancel', [unrouted, ...authenticate, cancelImageTaskHandler(tasks)]],
    [
      '/v1/chat/completions',
      [...json('chat.completions'), forwardJsonHandler(deps, { route: 'chat.completions', upstreamPath: '/chat/completions', validate: compile(chatCompletionsSchema), streamErrors: 'data' })],
    ],
    ['/v1/responses', [...json('responses'), forwardJsonHandler(deps, { route: 'responses', upstreamPath: '/responses', validate: compile(responsesSchema), streamErrors: 'event' })]],
    [
      '/api/v3/images/generations',
      [
        ...paid('images.native'),
        createKeptWork('images.native', resolved, keptWork),
        forwardJsonHandler(deps, { route: 'images.native', upstreamPath: '/images/generations', validate: compile(nativeImageSchema), streamErrors: 'data' }),
      ],
    ],
    ['/api/v3/contents/generations/tasks', [...paid('video.tasks'), createVideoTaskHandler(tasks, compile(videoTaskSchema))]],
    // the SDKs send a form (with or without an input_reference file); JSON clients send JSON
    [
      '/v1/videos',
      [...paid('video.tasks', createEditBody(multipartBody, jsonBody, 'multipart/form-data (as the SDKs send it, with an input_reference file) or application/json')), createVideoHandler(videos)],
    ],
    ...['/v1/videos/:id/remix', '/v1/videos/edits', '/v1/videos/extensions', '/v1/videos/characters'].map((path): [string, RequestHandler[]] => [
      path,
      [unrouted, ...authenticate, unofferedVideoHandler()],
    ]),
    // the caller's own delivery log (routes/deliveries.ts)
    ['/v1/deliveries/replay', [unrouted, ...authenticate, jsonBody, replayDeliveriesHandler(resolved.deliveries)]],
    ['/v1/deliveries/endpoints/enable', [unrouted, ...authenticate, jsonBody, enableEndpointHandler(resolved.deliveries)]],
    ['/v1/deliveries/:id/replay', [unrouted, ...authenticate, replayDeliveryHandler(resolved.deliveries)]],
    // an asset costs no image or video: no quote, `Prefer: dry-run` is not applied there
    ['/api/v3/open/CreateAsset', [...paid('assets', jsonBody, false), createAssetHandler(deps, compile(createAssetSchema))]],
  ]);

  // through the router's public API: Express matches each route (any case, one trailing slash
  // optional, as it always has) and runs its one handler, the route's chain (route-handler.ts)
  const router = express.Router();
  for (const [path, chain] of posts) router.post(path, routeChain(`POST ${path}`, chain));
  router.get(
    '/api/v3/contents/generations/tasks/:id',
    routeChain('GET /api/v3/contents/generations/tasks/:id', [beginRequest('video.tasks', resolved), ...authenticate, queryVideoTaskHandler(tasks)]),
  );
  router.get('/v1/videos', routeChain('GET /v1/videos', [unrouted, ...authenticate, listVideosHandler(videos)]));
  router.get('/v1/videos/characters/:id', routeChain('GET /v1/videos/characters/:id', [unrouted, ...authenticate, unofferedVideoHandler()]));
  router.get('/v1/videos/:id', routeChain('GET /v1/videos/:id', [beginRequest('video.tasks', resolved), ...authenticate, retrieveVideoHandler(videos)]));
  router.delete('/v1/videos/:id', routeChain('DELETE /v1/videos/:id', [unrouted, ...authenticate, deleteVideoHandler(videos)]));
  router.get(
    '/v1/videos/:id/content',
    routeChain('GET /v1/videos/:id/content', [beginRequest('video.tasks', resolved), ...authenticate, videoContentHandler(videos, resolved.storage?.store, resolved.logger)]),
  );
  router.get('/v1/images/tasks/:id', routeChain('GET /v1/images/tasks/:id', [unrouted, ...authenticate, queryImageTaskHandler(tasks)]));
  // the vendors' own calls when a task ends: outside verifyKey and afterAuthentication, the per-task token is the credential (routes/vendor-webhooks.ts)
  router.post(VENDOR_WEBHOOK_ROUTE, routeChain(`POST ${VENDOR_WEBHOOK_ROUTE}`, [unrouted, vendorWebhookHandler(vendorCalls, resolved.limits, resolved.logger)]));
  router.get('/v1/models', routeChain('GET /v1/models', [unrouted, ...authenticate, listModelsHandler(resolved)]));
  router.get('/v1/deliveries', routeChain('GET /v1/deliveries', [unrouted, ...authenticate, listDeliveriesHandler(resolved.deliveries)]));
  router.get('/v1/deliveries/:id', routeChain('GET /v1/deliveries/:id', [unrouted, ...authenticate, retrieveDeliveryHandler(resolved.deliveries)]));
  // durable results served by the router itself (localResultStorage): the signed URL is the credential
  const store = resolved.storage?.store;
  if (store?.read) router.get(STORED_RESULTS_PATH, unrouted, storedResultsHandler({ read: store.read.bind(store) }, resolved.logger));
  // keep this after every route (just before the error middleware): what is left under the gateway's
  // prefixes is answered as JSON, unless the host owns those paths (fallthrough)
  if (!resolved.fallthrough) router.use([...GATEWAY_PREFIXES], unrouted, notFoundHandler());
  router.use(createErrorMiddleware(resolved));

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await started;
    // the vendor calls being read end before the tasks and the scheduler they use
    await vendorCalls?.close();
    // before the scheduler stops: the waiting image tasks' callbacks are queued on it
    await tasks.close().catch((error: unknown) => resolved.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'image tasks not all ended at close'));
    await resolved.scheduler.close();
    http.close();
    await store?.close?.();
    await resolved.routing.close();
    resolved.logger.info({}, 'gateway closed: task scheduler stopped, upstream sockets freed');
  };
  const deleteResults = async (caller: Pick<Caller, 'id'>): Promise<number> => (store ? store.deletePrefix(tenantPrefix(String(caller.id))) : 0);
  const log = resolved.deliveries;
  const deliveries: DeliveriesApi = {
    list: (query) => log.list(query),
    get: (id) => log.get(id),
    replay: (id) => log.replay(id),
    replayAll: (filter) => log.replayAll(filter),
    enable: (url, options) => log.enable(url, options),
  };
  return Object.assign(router, { close, deleteResults, quota: (caller: Caller) => quotas.state(caller), health: () => resolved.routing.report(), deliveries });
}
