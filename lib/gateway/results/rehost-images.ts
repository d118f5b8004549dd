// Durable image results (docs/architecture.md "Long-lived work"): after the image pipeline has its answer, every image is stored
// (durable-results.ts) and `url` becomes the store's URL. The contract §2.4 answer keeps its shape;
// an OpenAI-compatible answer (upstreams §4.1) is rewritten only here, because its `data[]` must
// now carry the stored URLs: `b64_json` entries are stored from their bytes, and when the caller
// asked `response_format: "url"` (GPT-image models answer base64 only) the entry becomes a URL.
import type { ImageGenerationResponse } from '../../images/image-generation-response.js';
import { isObject, parseJsonBody } from '../../json/json-values.js';
import type { PassthroughResponse } from '../../providers/provider.js';
import { type RehostContext, type ResolvedStorage, StorageFailure, type Stored, storageFallback, storeBytes, storeFromUrl, urlOf } from './durable-results.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { Usage, UseCaseRequest } from '../use-case.js';

interface Target {
  storage: ResolvedStorage;
  context: RehostContext;
  requestBase: string;
  /** Aborted when the client leaves. */
  signal: AbortSignal;
}

function targetOf(deps: GatewayDeps, usage: Usage, request: UseCaseRequest): Target | undefined {
  const { storage } = deps.options;
  if (!storage) return undefined;
  const context: RehostContext = {
    storage,
    http: deps.http,
    limits: deps.options.limits,
    logger: deps.options.logger,
    telemetry: deps.options.telemetry,
    allowPrivate: deps.options.allowPrivateResultUrls,
    caller: request.caller,
    provider: usage.provider ?? 'upstream',
    signal: request.cancel.signal,
  };
  return { storage, context, requestBase: request.resultBase, signal: context.signal };
}

type Source = { url: string } | { bytes: Buffer };

/**
 * Stores every image of one answer, or none: the first failure stops the other transfers, deletes
 * what was already stored and is thrown, so a failed (or fallen-back) answer leaves no orphaned
 * objects in the tenant's prefix and bills no stored bytes. Bytes count into the usage event only
 * when every image is stored and signed.
 */
async function storeAll(target: Target, usage: Usage, sources: Array<Source | undefined>): Promise<Array<string | undefined>> {
  const { signal } = target;
  const controller = new AbortController();
  const follow = (): void => controller.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  const context: RehostContext = { ...target.context, signal: controller.signal };
  const stored: Stored[] = [];
  let failure: { error: unknown } | undefined;
  const results = await Promise.allSettled(
    sources.map(async (from) => {
      if (!from) return undefined;
      try {
        const item = 'url' in from ? await storeFromUrl(context, from.url, 'image') : await storeBytes(context, from.bytes);
        stored.push(item);
        return await urlOf(target.storage, item.key, target.requestBase);
      } catch (error) {
        // the first failure is the cause; the others' are the abort it triggers
        failure ??= { error };
        controller.abort(error);
        throw error;
      }
    }),
  );
  signal.removeEventListener('abort', follow);
  if (failure) {
    for (const item of stored) {
      void Promise.resolve()
        .then(() => target.storage.store.delete(item.key))
        .then(() => target.context.telemetry.recordStorageBytes(item.bytes, 'delete'))
        .catch(() => undefined);
    }
    throw failure.error;
  }
  const bytes = stored.reduce((sum, item) => sum + item.bytes, 0);
  if (stored.length > 0) usage.storedBytes = (usage.storedBytes ?? 0) + bytes;
  return results.map((result) => (result.status === 'fulfilled' ? result.value : undefined));
}

/** contract §2.4 answer: each `url` replaced by the stored one (b64_json from the same downloaded buffer). */
export async function rehostImageAnswer(deps: GatewayDeps, usage: Usage, request: UseCaseRequest, response: ImageGenerationResponse, images: Array<Buffer | undefined> | undefined): Promise<void> {
  const target = targetOf(deps, usage, request);
  if (!target) return;
  try {
    const urls = await storeAll(
      target,
      usage,
      response.data.map((item, index): Source | undefined => {
        const bytes = images?.[index] ?? (item.b64_json !== '' ? Buffer.from(item.b64_json, 'base64') : undefined);
        if (bytes) return { bytes };
        return item.url !== '' ? { url: item.url } : undefined;
      }),
    );
    urls.forEach((url, index) => {
      if (url !== undefined) response.data[index]!.url = url;
    });
  } catch (error) {
    if (!(error instanceof StorageFailure)) throw error;
    response.extra.storage_error = storageFallback(target.storage, deps.options.logger, error, { provider: usage.provider, model: usage.model });
  }
}

/**
 * An OpenAI-compatible answer with its images stored: `url` entries re-hosted, `b64_json` entries
 * stored and given a `url` (and, when the caller asked for URLs, the base64 dropped). Unchanged
 * (byte for byte) when storage is off or the answer has no data list.
 */
export async function rehostPassthrough(deps: GatewayDeps, usage: Usage, request: UseCaseRequest, response: PassthroughResponse, requestedFormat: unknown): Promise<PassthroughResponse> {
  const target = targetOf(deps, usage, request);
  if (!target || response.status < 200 || response.status >= 300) return response;
  const parsed = parseJsonBody(response.body);
  if (!isObject(parsed) || !Array.isArray(parsed.data)) return response;
  const data = parsed.data as unknown[];
  const wantsUrl = requestedFormat === 'url';
  const body: Record<string, unknown> = { ...parsed };
  try {
    const urls = await storeAll(
      target,
      usage,
      data.map((item): Source | undefined => {
        if (!isObject(item)) return undefined;
        if (typeof item.b64_json === 'string' && item.b64_json !== '') return { bytes: Buffer.from(item.b64_json, 'base64') };
        return typeof item.url === 'string' && item.url !== '' ? { url: item.url } : undefined;
      }),
    );
    body.data = data.map((item, index) => {
      const url = urls[index];
      if (!isObject(item) || url === undefined) return item;
      if (typeof item.b64_json === 'string' && item.b64_json !== '') {
        const { b64_json: _dropped, ...rest } = item;
        return wantsUrl ? { ...rest, url } : { ...item, url };
      }
      return { ...item, url };
    });
  } catch (error) {
    if (!(error instanceof StorageFailure)) throw error;
    const note = storageFallback(target.storage, deps.options.logger, error, { provider: usage.provider, model: usage.model });
    return { ...response, body: Buffer.from(JSON.stringify({ ...parsed, extra: { ...(isObject(parsed.extra) ? parsed.extra : {}), storage_error: note } })) };
  }
  return { ...response, contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) };
}
