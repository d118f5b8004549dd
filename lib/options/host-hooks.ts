// The public types of the functions a host hands the gateway (docs/architecture.md "Public contract"):
// `verifyKey`, `resolveUpstream`, `models.list`, `logger` and the `tenancy.afterAuthentication` middleware. Types only; the domain types they speak
// of (Caller, Upstream, RouteName) are in types.ts.
// express's Request under a name of its own, apart from Node's global (fetch) one: the rolled-up
// declarations must name express's (scripts/package-entries.ts)
import type { NextFunction, Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { Caller, Logger, RouteName, Upstream } from '../types.js';
import type { RoutedUpstreams } from './routing-options.js';

// the logger's type is a leaf's (lib/types.ts): the stores that log must not import the options
export type { Logger };

/**
 * Checks a bearer key (`verifyKey` option, required). Return the caller, or null/undefined for an
 * unknown or deactivated key (401). No default.
 * @example verifyKey: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })
 * @example verifyKey: async (key) => (await db.keys.find(key))?.tenant ?? null
 */
export type VerifyKey = (key: string, req: ExpressRequest) => Caller | null | undefined | Promise<Caller | null | undefined>;

/** What `resolveUpstream` is asked. */
export interface ResolveUpstreamInput {
  /** The model the caller named. @example model: 'x-image-2.0' */
  model: string;
  /** The endpoint the request is for. @example route: 'images.generations' */
  route: RouteName;
  /** Who is calling (what `verifyKey` answered, or the task creator's copy for background polls). */
  caller: Caller;
  /** The request being served; absent for background work (task polls behind callbacks). */
  req?: ExpressRequest;
}

/**
 * Where a model goes (`resolveUpstream` option, required). Return null/undefined for a model this
 * caller may not use (404), one upstream, or a list tried in order when one fails before answering
 * (connection error, 429, 5xx). No default.
 * @example resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey, model: 'qwen-image-plus' })
 */
export type ResolveUpstream = (input: ResolveUpstreamInput) => ResolvedUpstreams | Promise<ResolvedUpstreams>;

/** What `resolveUpstream` answers: one upstream, a list, a list with its routing strategy (docs/routing-and-health.md), or null. */
export type ResolvedUpstreams = Upstream | readonly Upstream[] | RoutedUpstreams | null | undefined;

/**
 * One entry a `models.list` hook may return beside plain names (OpenAI `Model` fields).
 * @example { id: 'x-video', owned_by: 'ark' }
 */
export interface ListedModel {
  /** The model name. No default. @example id: 'x-image-2.0' */
  id: string;
  /** Default `'gateway'`. @example owned_by: 'ark' */
  owned_by?: string;
  /** Unix seconds. Default 0. @example created: 1_700_000_000 */
  created?: number;
}

/**
 * Names the models `GET /v1/models` lists for a caller (`models.list` option). Default: the
 * catalogue entries `resolveUpstream` routes for that caller.
 * @example list: (caller) => ['x-image-2.0', 'x-image-edit', { id: 'x-video', owned_by: 'ark' }]
 */
export type ListModels = (caller: Caller) => readonly (string | ListedModel)[] | Promise<readonly (string | ListedModel)[]>;

/**
 * A host middleware of the `tenancy.afterAuthentication` option: Express's own shape, run after the key was
 * accepted (`gatewayCaller(res)` is the caller) and before the body is read. It calls `next()` to let
 * the request on, or `next(error)` to answer it in the gateway's error shape.
 * @example (req, res, next) => (plans.allows(gatewayCaller(res)!, req.path) ? next() : next(GatewayError.permissionDenied('Your plan does not include this endpoint.')))
 */
export type AuthenticatedMiddleware = (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => unknown;
