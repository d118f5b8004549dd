// createGatewayRouter(options): the Express router that serves the gateway (design.md). Options are
// resolved and schemas compiled here, once; each route is begin -> auth -> body -> handler, and one
// error middleware renders every failure. Paths it does not serve fall through to the host.
import express, { type Router } from 'express';
import { createAuthenticate } from './auth/authenticate.js';
import { createErrorMiddleware } from './errors/error-middleware.js';
import { UpstreamHttp } from './http/upstream-http.js';
import { createJsonBody } from './http/json-body.js';
import { createMultipartBody } from './http/multipart-body.js';
import { type GatewayOptions, resolveOptions } from './options.js';
import { forwardJsonHandler } from './routes/forward-json.js';
import { imageEditsHandler } from './routes/image-edits.js';
import { imageGenerationsHandler } from './routes/image-generations.js';
import type { RouteDeps } from './routes/route-deps.js';
import type { RouteName } from './types.js';
import { beginRoute } from './routes/route-state.js';
import { chatCompletionsSchema, createAssetSchema, nativeImageSchema, responsesSchema } from './schemas/forward-schemas.js';
import { createAssetHandler } from './routes/create-asset.js';
import { imageGenerationSchema } from './schemas/image-generation-schema.js';
import { videoTaskSchema } from './schemas/video-task-schema.js';
import { TaskService } from './tasks/task-service.js';
import { createVideoTaskHandler, queryVideoTaskHandler } from './routes/video-tasks.js';
import { createSchemaCompiler } from './schemas/validator.js';

export interface GatewayRouter extends Router {
  /** Stops timers and pollers and frees pooled upstream sockets. Safe to call twice. */
  close(): Promise<void>;
}

export function createGatewayRouter(options: GatewayOptions): GatewayRouter {
  const resolved = resolveOptions(options);
  const compile = createSchemaCompiler();
  const http = new UpstreamHttp();
  const deps: RouteDeps = {
    options: resolved,
    http,
    imageRules: {
      validate: compile(imageGenerationSchema),
      limits: resolved.limits,
      allowPrivateImageUrls: resolved.allowPrivateImageUrls,
    },
  };
  const authenticate = createAuthenticate(resolved);
  const jsonBody = createJsonBody(resolved.limits.jsonBodyBytes);

  const multipartBody = createMultipartBody(resolved.limits);
  const tasks = new TaskService(resolved, http);
  // polls and deliveries start now; a failure to start (Redis down) is logged, requests still work
  const started = tasks.start().catch((error: unknown) => {
    resolved.logger.error('the task scheduler did not start', { error: error instanceof Error ? error.message : String(error) });
  });
  const json = (route: RouteName) => [beginRoute(route, resolved), authenticate, jsonBody];

  const router = express.Router();
  router.post('/v1/images/generations', ...json('images.generations'), imageGenerationsHandler(deps));
  router.post('/v1/images/edits', beginRoute('images.edits', resolved), authenticate, multipartBody, imageEditsHandler(deps));
  router.post(
    '/v1/chat/completions',
    ...json('chat.completions'),
    forwardJsonHandler(deps, { route: 'chat.completions', upstreamPath: '/chat/completions', validate: compile(chatCompletionsSchema), streamErrors: 'data' }),
  );
  router.post(
    '/v1/responses',
    ...json('responses'),
    forwardJsonHandler(deps, { route: 'responses', upstreamPath: '/responses', validate: compile(responsesSchema), streamErrors: 'event' }),
  );
  router.post(
    '/api/v3/images/generations',
    ...json('images.native'),
    forwardJsonHandler(deps, { route: 'images.native', upstreamPath: '/images/generations', validate: compile(nativeImageSchema), streamErrors: 'data' }),
  );
  router.post('/api/v3/contents/generations/tasks', ...json('video.tasks'), createVideoTaskHandler(tasks, compile(videoTaskSchema)));
  router.get('/api/v3/contents/generations/tasks/:id', beginRoute('video.tasks', resolved), authenticate, queryVideoTaskHandler(tasks));
  router.post('/api/v3/open/CreateAsset', ...json('assets'), createAssetHandler(deps, compile(createAssetSchema)));
  router.use(createErrorMiddleware(resolved));

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await started;
    await resolved.scheduler.close();
    http.close();
  };
  return Object.assign(router, { close });
}
