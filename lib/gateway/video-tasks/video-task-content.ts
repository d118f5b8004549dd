// The content of a video task create, checked and mapped before anything is charged (contract §2.7,
// docs/video-tasks-and-callbacks.md): `asset://<id>` references only to the caller's own assets, media
// URLs by the one URL check every route shares, and `draft_task` ids of the caller's own tasks swapped
// for the upstream's. Which strings are references or URLs is content-references.ts.
import { GatewayError } from '../../errors/gateway-error.js';
import type { VideoContentItem } from '../../schemas/video-task-schema.js';
import { requirePublicUrl } from '../../security/public-url.js';
import type { Caller } from '../../types.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { WELL_FORMED_ASSET_ID, assetIdOf, assetReferencesIn, isAssetReference, isMediaUrlCandidate, stringsOf } from './content-references.js';
import { findOwnTask } from '../tasks/task-records.js';

/** The prefix of video task ids (`task_…`, tasks/task-records.ts). */
export const VIDEO_TASK_PREFIX = 'task';
// each distinct asset reference costs a store read: a body cannot make one request into thousands
const MAX_ASSET_REFERENCES = 64;
// longer than any asset id; a longer one is refused before it becomes a store key
const MAX_ASSET_ID_LENGTH = 256;

/**
 * `asset://<id>` only for the caller's own assets (or the operator's, when allowed), and media URLs
 * get the image URL rules, in every string of every item at any depth: Ark reads fields the item's
 * `type` does not name, and new Ark versions add fields. `draft_task` ids, wherever an item carries
 * one, are gateway task ids of the caller, swapped for Ark's.
 */
export async function mapReferences(options: ResolvedOptions, content: VideoContentItem[], caller: Caller): Promise<Array<Record<string, unknown>>> {
  const assets = new Map<string, string>();
  for (const [index, item] of content.entries()) {
    for (const entry of stringsOf(item, `content[${index}]`)) {
      for (const reference of assetReferencesIn(entry.value)) if (!assets.has(reference)) assets.set(reference, entry.path);
      // a string that is a reference is judged as one only, never also as a URL
      if (isAssetReference(entry.value) || !isMediaUrlCandidate(entry)) continue;
      // what is forwarded is the normalized URL (public-url.ts), written into the parsed body in place
      const normalized = checkMediaUrl(options, entry.value, entry.path);
      if (normalized !== undefined && normalized !== entry.value) entry.replace(normalized);
    }
  }
  if (assets.size > MAX_ASSET_REFERENCES) throw GatewayError.invalidRequest(`content references more than ${MAX_ASSET_REFERENCES} different assets`, 'content');
  // in order, so the first offending field is the one named
  for (const [reference, path] of assets) await checkAssetReference(options, reference, path, caller);

  const mapped: Array<Record<string, unknown>> = [];
  for (const [index, item] of content.entries()) {
    if (item.draft_task === undefined) {
      mapped.push(item);
      continue;
    }
    // the schema holds draft_task, wherever it appears, to { id: non-empty string }
    const draft = item.draft_task;
    const { id } = draft;
    const record = await findOwnTask(options.store, { kind: 'video', idPrefix: VIDEO_TASK_PREFIX }, caller.id, id);
    if (!record) {
      throw GatewayError.invalidRequest(`content[${index}].draft_task.id '${id.slice(0, 64)}' is not one of your tasks`, `content[${index}].draft_task.id`);
    }
    mapped.push({ ...item, draft_task: { ...draft, id: record.upstream.taskId } });
  }
  return mapped;
}

/**
 * Only the exact spelling `asset://<id>` can pass: an id recorded for the caller, or, with
 * allow.operatorAssets, a well-formed Ark id recorded for nobody. Another tenant's asset and one that
 * does not exist get the same answer, so a caller cannot probe for other tenants' ids.
 */
async function checkAssetReference(options: ResolvedOptions, reference: string, path: string, caller: Caller): Promise<void> {
  const id = assetIdOf(reference);
  const asset = id && id.length <= MAX_ASSET_ID_LENGTH ? await options.store.getAsset(id) : undefined;
  const allowed = asset ? asset.owner === caller.id : options.allowOperatorAssets && id !== undefined && WELL_FORMED_ASSET_ID.test(id);
  if (!allowed) throw GatewayError.invalidRequest(`${path} references '${reference.slice(0, 100)}', which is not one of your assets`, path);
}

/** The normalized URL to forward, or undefined for a Data URL (kept as it is). Asset references never come here. */
function checkMediaUrl(options: ResolvedOptions, url: string, path: string): string | undefined {
  if (/^data:/i.test(url)) return undefined;
  // the one URL check every route shares (public-url.ts)
  return requirePublicUrl(
    url,
    path,
    { allowPrivate: options.allowPrivateImageUrls },
    {
      notHttp: () => 'must be an http(s) URL, a Data URL or asset://<id>',
      notPublic: 'names a loopback, private or link-local host; the URL must be publicly reachable',
    },
  );
}
