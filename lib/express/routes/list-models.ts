// GET /v1/models: the OpenAI list shape (`{ object: 'list', data: [{ id, object: 'model', created,
// owned_by }] }`), which `client.models.list()` and most OpenAI-compatible UIs call first. The names
// come from the host's `listModels(caller)` hook, or by default from the image-family table, keeping
// only the names `resolveUpstream` accepts for this caller, so the list never offers a 404.
import type { RequestHandler } from 'express';
import { callerOf } from '../authenticate.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { routeHandler } from '../route-handler.js';
import { sendJson } from '../send-body.js';
import type { ResolvedOptions } from '../../gateway/options.js';
import type { Caller } from '../../types.js';
import type { ListedModel } from '../../options/host-hooks.js';

/** One entry of the OpenAI `GET /v1/models` answer (openai-node `Model`). */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

const DEFAULT_OWNER = 'gateway';

export function listModelsHandler(options: ResolvedOptions): RequestHandler {
  return routeHandler('listModels', async (context) => {
    const caller = callerOf(context);
    let listed: readonly (string | ListedModel)[];
    try {
      listed = options.listModels ? await options.listModels(caller) : await defaultModelNames(options, caller);
    } catch (error) {
      options.logger.error({ requestId: context.requestId, error: error instanceof Error ? error.message : String(error) }, 'listModels threw; answering 500');
      throw GatewayError.internal();
    }
    sendJson(context, 200, { object: 'list', data: toModelObjects(listed) });
  });
}

/** Strings and `{ id, owned_by?, created? }` to model objects; duplicates and blank names dropped. */
export function toModelObjects(listed: readonly (string | ListedModel)[] | null | undefined): ModelObject[] {
  const seen = new Set<string>();
  const models: ModelObject[] = [];
  for (const entry of Array.isArray(listed) ? listed : []) {
    const item: Partial<ListedModel> = typeof entry === 'string' ? { id: entry } : ((entry as ListedModel | null) ?? {});
    if (typeof item.id !== 'string' || item.id === '' || seen.has(item.id)) continue;
    seen.add(item.id);
    models.push({
      id: item.id,
      object: 'model',
      created: Number.isSafeInteger(item.created) ? (item.created as number) : 0,
      owned_by: typeof item.owned_by === 'string' && item.owned_by !== '' ? item.owned_by : DEFAULT_OWNER,
    });
  }
  return models;
}

/**
 * The default list: each image family's name (a prefix pattern `x-image-2.0*` lists `x-image-2.0`),
 * kept when the resolver accepts it for this caller. A resolver that throws or returns null for a
 * name simply leaves the name out: listing must not fail because one model is unavailable.
 */
async function defaultModelNames(options: ResolvedOptions, caller: Caller): Promise<string[]> {
  const names = [...new Set(options.imageModels.families.map((family) => family.pattern.replace(/\*$/, '')))];
  const accepted = await Promise.all(
    names.map(async (model) => {
      try {
        const answer = await options.resolveUpstream({ model, route: 'images.generations', caller });
        return answer == null || (Array.isArray(answer) && answer.length === 0) ? undefined : model;
      } catch {
        return undefined;
      }
    }),
  );
  return accepted.filter((model): model is string => model !== undefined);
}
