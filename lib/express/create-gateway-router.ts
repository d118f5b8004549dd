// createGatewayRouter(options): the Express router that serves the gateway (docs/architecture.md). Options are
// resolved and schemas compiled here, once; each route is begin -> auth -> body -> handler, and one
// error middleware renders every failure. Paths it does not serve fall through to the host.
import express, { type RequestHandler, type Router } from 'express';
import { dispatchPosts } from './dispatch.js';
import { createAuthenticate } from './authenticate.js';
import { createErrorMiddleware } from './error-middleware.js';
import { UpstreamHttp } from '../transport/upstream-http.js';
import { limitCallerInFlight } from './caller-in-flight.js';
import { watchClientStall } from './client-stall.js';
import { createJsonBody } from './body/json-body.js';
import { createMultipartBody } from './body/multipart-body.js';
import { type GatewayOptions, resolveOptions } from '../gateway/options.js';
import { forwardJsonHandler } from './routes/forward-json.js';
import { imageEditsHandler } from './routes/image-edits.js';
import { imageGenerationsHandler } from './routes/image-generations.js';
import type { GatewayDeps } from '../gateway/gateway-deps.js';
import type { RouteName } from '../types.js';
import { beginRoute } from './route-state.js';
import { chatCompletionsSchema, createAssetSchema, nativeImageSchema, responsesSchema } from '../schemas/forward-schemas.js';
import { createAssetHandler } from './routes/create-asset.js';
import { imageGenerationSchema } from '../schemas/image-generation-schema.js';
import { videoTaskSchema } from '../schemas/video-task-schema.js';
import { TaskService } from '../gateway/tasks/task-service.js';
import { createVideoTaskHandler, queryVideoTaskHandler } from './routes/video-tasks.js';
import { createSchemaCompiler } from '../schemas/validator.js';
import { listModelsHandler } from './routes/list-models.js';
import { GATEWAY_PREFIXES, notFoundHandler } from './routes/not-found.js';

export interface GatewayRouter extends Router {
  /** Stops timers and pollers and frees pooled upstream sockets. Safe to call twice. */
  close(): Promise<void>;
}

export function createGatewayRouter(options: GatewayOptions): GatewayRouter {
  const resolved = resolveOptions(options);
  const compile = createSchemaCompiler();
  const http = new UpstreamHttp({ sockets: resolved.limits.upstreamSockets, queue: resolved.limits.upstreamQueue });
  const deps: GatewayDeps = {
    options: resolved,
    http,
    imageRules: {
      validate: compile(imageGenerationSchema),
      limits: resolved.limits,
      allowPrivateImageUrls: resolved.allowPrivateImageUrls,
    },
  };
  // every route: slow readers cut after clientStallMs, the key checked, then one of the caller's
  // in-flight slots taken (no tenant can starve another). Express flattens handler arrays.
  const authenticate: RequestHandler[] = [watchClientStall(resolved.limits.clientStallMs, resolved.logger), createAuthenticate(resolved), limitCallerInFlight(resolved.limits.inFlightPerCaller)];
  const jsonBody = createJsonBody(resolved);

  const multipartBody = createMultipartBody(resolved.limits);
  const tasks = new TaskService(resolved, http);
  // polls and deliveries start now; a failure to start (Redis down) is logged, requests still work
  const started = tasks.start().catch((error: unknown) => {
    resolved.logger.error({ error: error instanceof Error ? error.message : String(error) }, 'the task scheduler did not start');
  });
  const json = (route: RouteName): RequestHandler[] => [beginRoute(route, resolved), ...authenticate, jsonBody];

  // the POST routes: one Map lookup, then their handlers in order (dispatch.ts)
  const posts = new Map<string, RequestHandler[]>([
    ['/v1/images/generations', [...json('images.generations'), imageGenerationsHandler(deps)]],
    ['/v1/images/edits', [beginRoute('images.edits', resolved), ...authenticate, multipartBody, imageEditsHandler(deps)]],
    [
      '/v1/chat/completions',
      [...json('chat.completions'), forwardJsonHandler(deps, { route: 'chat.completions', upstreamPath: '/chat/completions', validate: compile(chatCompletionsSchema), streamErrors: 'data' })],
    ],
    ['/v1/responses', [...json('responses'), forwardJsonHandler(deps, { route: 'responses', upstreamPath: '/responses', validate: compile(responsesSchema), streamErrors: 'event' })]],
    [
      '/api/v3/images/generations',
      [...json('images.native'), forwardJsonHandler(deps, { route: 'images.native', upstreamPath: '/images/generations', validate: compile(nativeImageSchema), streamErrors: 'data' })],
    ],
    ['/api/v3/contents/generations/tasks', [...json('video.tasks'), createVideoTaskHandler(tasks, compile(videoTaskSchema))]],
    ['/api/v3/open/CreateAsset', [...json('assets'), createAssetHandler(deps, compile(createAssetSchema))]],
  ]);

  const router = express.Router();
  router.use(dispatchPosts(posts));
  router.get('/api/v3/contents/generations/tasks/:id', beginRoute('video.tasks', resolved), authenticate, queryVideoTaskHandler(tasks));
  // no RouteName (it is a closed public union) and no upstream call: authenticated, but no usage event
  router.get('/v1/models', authenticate, listModelsHandler(resolved));
  // keep this after every route (just before the error middleware): what is left under the gateway's
  // prefixes is answered as JSON, unless the host owns those paths (fallthrough)
  if (!resolved.fallthrough) router.use([...GATEWAY_PREFIXES], notFoundHandler());
  router.use(createErrorMiddleware(resolved));

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await started;
    await resolved.scheduler.close();
    http.close();
    resolved.logger.info({}, 'gateway closed: task scheduler stopped, upstream sockets freed');
  };
  return Object.assign(router, { close });
}
