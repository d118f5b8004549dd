// The public types of the functions a host hands the gateway (docs/architecture.md "Public contract"):
// `verifyKey`, `resolveUpstream`, `listModels` and `logger`. Types only; the domain types they speak
// of (Caller, Upstream, RouteName) are in types.ts.
import type { Request } from 'express';
import type { Caller, RouteName, Upstream } from '../types.js';

/**
 * Checks a bearer key (`verifyKey` option, required). Return the caller, or null/undefined for an
 * unknown or deactivated key (401). No default.
 * @example verifyKey: staticKeys({ 'sk-tenant-a': { id: 'tenant-a' } })
 * @example verifyKey: async (key) => (await db.keys.find(key))?.tenant ?? null
 */
export type VerifyKey = (key: string, req: Request) => Caller | null | undefined | Promise<Caller | null | undefined>;

/** What `resolveUpstream` is asked. */
export interface ResolveUpstreamInput {
  /** The model the caller named. @example model: 'x-image-2.0' */
  model: string;
  /** The endpoint the request is for. @example route: 'images.generations' */
  route: RouteName;
  /** Who is calling (what `verifyKey` answered, or the task creator's copy for background polls). */
  caller: Caller;
  /** The request being served; absent for background work (task polls behind callbacks). */
  req?: Request;
}

/**
 * Where a model goes (`resolveUpstream` option, required). Return null/undefined for a model this
 * caller may not use (404), one upstream, or a list tried in order when one fails before answering
 * (connection error, 429, 5xx). No default.
 * @example resolveUpstream: ({ model }) => ({ provider: 'dashscope', baseURL: 'https://dashscope-intl.aliyuncs.com/api/v1', apiKey, model: 'qwen-image-plus' })
 */
export type ResolveUpstream = (input: ResolveUpstreamInput) => Upstream | readonly Upstream[] | null | undefined | Promise<Upstream | readonly Upstream[] | null | undefined>;

/**
 * One entry a `listModels` hook may return beside plain names (OpenAI `Model` fields).
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
 * Names the models `GET /v1/models` lists for a caller (`listModels` option). Default: the
 * image-family names of `imageModels` that `resolveUpstream` accepts for that caller.
 * @example listModels: (caller) => ['x-image-2.0', 'x-image-edit', { id: 'x-video', owned_by: 'ark' }]
 */
export type ListModels = (caller: Caller) => readonly (string | ListedModel)[] | Promise<readonly (string | ListedModel)[]>;

/**
 * Where the gateway logs (`logger` option): pino's calling convention (`logger.warn(fields, message)`),
 * so a pino (or bunyan-style) logger is passed as it is and the fields arrive as structured fields.
 * `child`, when present, is called once with `{ component: 'express-image-gateway' }`. Never given a
 * key or image bytes. Default: silent (a missing level is silent too).
 * @example logger: pino()
 */
export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child?(bindings: Record<string, unknown>): Logger;
}
