// A typical Express SaaS backend that embeds the gateway (docs/getting-started.md "Your parsers first"):
// its own request logger (pino-http), its own JSON parser mounted first for the whole app, its own
// tenants and keys, a rate limiter per tenant, its own error handler and its own Redis client. The
// gateway is mounted under /ai by the docs' recipe: the host's parsers skip the gateway's paths
// (skipGatewayRoutes), the rate limiter runs after the gateway's authentication with the tenant known
// (tenancy.afterAuthentication), and the gateway logs through the host's pino. With its Redis client,
// given once (`redis`), several instances share tasks, keys, quotas and the scheduler. The specs import this app.
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { type Logger as PinoLogger, pino } from 'pino';
import { pinoHttp } from 'pino-http';
import { GatewayError, type GatewayRouter, type Upstream, createGatewayRouter, gatewayCaller, skipGatewayRoutes } from '../../lib/index.js';
import { createPlayground } from '../../lib/playground.js';
import { DEMO_KEYS, PLAN_MODELS, REQUESTS_PER_MINUTE, type Tenant, type TenantTable, tenantTable } from './tenants.js';

/** Where the gateway is mounted: the SDKs' base URL is `<origin>/ai/v1`. */
export const MOUNT_PATH = '/ai';

export interface SaasHostOptions {
  /** The host's pino logger. Default: pino to stdout at `info`. */
  logger?: PinoLogger;
  /** The host's own ioredis client, for everything the gateway shares between instances. Default: none, all in memory. */
  redis?: Redis;
  /** Prefix of everything the gateway keeps in Redis. Default `saas-host`. */
  redisPrefix?: string;
  /** The DashScope base (`.../api/v1`) the image models go to. Required. */
  dashscopeBaseURL: string;
  /** The Ark base (`.../api/v3`) the video model goes to. Required. */
  arkBaseURL: string;
  /** The operator's vendor key, sent upstream (a placeholder for the simulations). */
  vendorKey?: string;
  /** The tenant table. Default `DEMO_KEYS`. */
  tenants?: TenantTable;
  /** Callbacks to loopback receivers (development and the specs only). Default false. */
  allowLocalCallbacks?: boolean;
  /**
   * The secret of the tenant identifier sent to vendors, so a vendor's abuse report names one tenant
   * (docs/security.md "Tenant identifier sent to vendors"). Default: none, nothing sent.
   */
  safetyIdentifierSecret?: string;
}

export interface SaasHost {
  app: express.Express;
  gateway: GatewayRouter;
  logger: PinoLogger;
}

const SIMULATION_KEY = 'sk-simulated-upstream';
const IMAGE_MODELS: Readonly<Record<string, string>> = { 'x-image-2.0': 'qwen-image-2.0', 'x-image-edit': 'qwen-image-edit-plus' };

export function createSaasHost(options: SaasHostOptions): SaasHost {
  const logger = options.logger ?? pino({ level: 'info' });
  const tenants = options.tenants ?? tenantTable(DEMO_KEYS);
  const vendorKey = options.vendorKey ?? SIMULATION_KEY;
  const { redis } = options;
  const prefix = options.redisPrefix ?? 'saas-host';

  const gateway = createGatewayRouter({
    // the host's own key table decides who calls
    verifyKey: (key) => tenants.byKey(key) ?? null,
    // each plan its models; a model outside the plan is a 403 that says so
    resolveUpstream: ({ model, route, caller }): Upstream | null => {
      const plan = (caller as Tenant).plan;
      if (!PLAN_MODELS[plan].includes(model)) {
        if (Object.values(PLAN_MODELS).some((models) => models.includes(model))) throw GatewayError.permissionDenied(`The ${plan} plan does not include ${model}.`);
        return null;
      }
      if (route === 'video.tasks') return { provider: 'ark', baseURL: options.arkBaseURL, apiKey: vendorKey, model: 'doubao-seedance-1-0-pro-250528' };
      const upstreamModel = IMAGE_MODELS[model];
      return upstreamModel && (route === 'images.generations' || route === 'images.edits')
        ? { provider: 'dashscope', baseURL: options.dashscopeBaseURL, apiKey: vendorKey, model: upstreamModel }
        : null;
    },
    // the host's pino: the gateway's lines carry pino-http's request id (`requestId`)
    logger,
    // the host's Redis, given once: task records, Idempotency-Keys and the task scheduler (BullMQ)
    // are shared by every instance, each key under `<prefix>:`
    ...(redis ? { redis: { client: redis, prefix: `${prefix}:` } } : {}),
    callbacks: { allowLocal: options.allowLocalCallbacks ?? false },
    tenancy: {
      // each tenant's opaque identifier on every vendor call; safetyIdentifierOf(tenant.id, secret) maps a report back
      safetyIdentifier: options.safetyIdentifierSecret ? { secret: options.safetyIdentifierSecret } : false,
      // the host's rate limiter, keyed by tenant (every key of a tenant shares its budget), answered in
      // the gateway's error shape; it runs after authentication and before any body is read. Its
      // default store counts per process: several instances would give it a shared store (Redis)
      afterAuthentication: [
        rateLimit({
          windowMs: 60_000,
          limit: (_req, res) => REQUESTS_PER_MINUTE[(gatewayCaller(res) as Tenant).plan],
          keyGenerator: (_req, res) => gatewayCaller(res)!.id,
          standardHeaders: 'draft-8',
          legacyHeaders: false,
          handler: (_req, res, next, limits) => {
            const allowed = REQUESTS_PER_MINUTE[(gatewayCaller(res) as Tenant).plan];
            next(GatewayError.rateLimited(`Your plan allows ${allowed} requests a minute.`, limits.windowMs / 1000));
          },
        }),
      ],
    },
  });

  const app = express();
  app.disable('x-powered-by');
  // the host's request log: every request, the gateway's included, one line with its id
  // (method, path and id only: the Authorization header carries a customer key, contract §5.4)
  app.use(pinoHttp({ logger, serializers: { req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }) } }));
  // the host's parsers come first, for the whole app, as in most apps; they skip the gateway's
  // paths, so the gateway authenticates before it reads a body and reads it with its own limits
  app.use(skipGatewayRoutes(express.json({ limit: '100kb' }), { mountPath: MOUNT_PATH }));
  app.use(skipGatewayRoutes(express.urlencoded({ extended: false }), { mountPath: MOUNT_PATH }));

  // the host's own API, with its own authentication against the same tenant table
  const requireTenant: RequestHandler = (req, res, next) => {
    const key = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const tenant = key ? tenants.byKey(key) : undefined;
    if (!tenant) {
      res.status(401).json({ message: 'Unknown API key' });
      return;
    }
    res.locals.tenant = tenant;
    next();
  };
  app.get('/account', requireTenant, (_req, res) => {
    const tenant = res.locals.tenant as Tenant;
    res.json({ tenant: tenant.id, plan: tenant.plan, models: PLAN_MODELS[tenant.plan], requestsPerMinute: REQUESTS_PER_MINUTE[tenant.plan] });
  });
  app.post('/notes', requireTenant, (req, res) => {
    res.status(201).json({ saved: req.body as unknown });
  });

  app.use(MOUNT_PATH, gateway);
  app.use('/playground', createPlayground({ apiBase: MOUNT_PATH, models: { image: 'x-image-2.0', edit: 'x-image-edit', video: 'x-video' } }));

  // the host's own error handler, for its own routes and parsers (the gateway answers its own errors)
  const hostErrors: ErrorRequestHandler = (error: { status?: number; message?: string }, req, res, _next) => {
    const status = typeof error.status === 'number' && error.status >= 400 && error.status < 600 ? error.status : 500;
    req.log.error({ err: error }, 'host route failed');
    res.status(status).json({ message: status < 500 ? (error.message ?? 'Bad request') : 'Something went wrong' });
  };
  app.use(hostErrors);
  return { app, gateway, logger };
}
