// createGatewayRouter(options): the Express router that serves the gateway (design.md). Options are
// resolved and schemas compiled here, once; each route is begin -> auth -> body -> handler, and one
// error middleware renders every failure. Paths it does not serve fall through to the host.
import express, { type Router } from 'express';
import { createAuthenticate } from './auth/authenticate.js';
import { createErrorMiddleware } from './errors/error-middleware.js';
import { UpstreamHttp } from './http/upstream-http.js';
import { createJsonBody } from './http/json-body.js';
import { type GatewayOptions, resolveOptions } from './options.js';
import { imageGenerationsHandler } from './routes/image-generations.js';
import type { RouteDeps } from './routes/route-deps.js';
import { beginRoute } from './routes/route-state.js';
import { imageGenerationSchema } from './schemas/image-generation-schema.js';
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

  const router = express.Router();
  router.post('/v1/images/generations', beginRoute('images.generations', resolved), authenticate, jsonBody, imageGenerationsHandler(deps));
  router.use(createErrorMiddleware(resolved));

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    http.close();
  };
  return Object.assign(router, { close });
}
