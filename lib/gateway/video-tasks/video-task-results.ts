// A succeeded video task's results, kept (docs/durable-results.md): the video and last frame are
// re-hosted once into the operator's storage and their keys recorded with compare-and-set before
// anything names them; a query and a callback then answer the store's freshly signed URLs.
import { ERROR_CODES } from '../../errors/error-codes.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { isObject } from '../../json/json-values.js';
import type { ProvenanceReport } from '../../options/provenance-options.js';
import { readProvenance } from '../../provenance/read-provenance.js';
import type { VideoTaskRecord } from '../../stores/tasks/task-store.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { Upstream } from '../../types.js';
import { KeptBytes, type RehostContext, StorageFailure, storageFallback, storeFromUrl, urlOf } from '../results/durable-results.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { CAS_ROUNDS, NEVER_ABORTED } from '../tasks/background-work.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';
import { upstreamTasksOf } from '../../providers/registry.js';
import type { UpstreamTaskState } from './upstream-task-state.js';
import { getTaskOf, updateTaskOf } from '../tasks/task-records.js';

/** The largest video read for its Content Credentials (docs/provenance.md): a larger one is stored, not reported. */
const PROVENANCE_VIDEO_BYTES = 256 * 1024 * 1024;

export class VideoTaskResults {
  /** Re-hostings in progress on this instance, by task id: a query polling meanwhile joins it. */
  private readonly storing = new Map<string, Promise<{ record: VideoTaskRecord; bytes?: number }>>();

  constructor(
    private readonly options: ResolvedOptions,
    private readonly http: UpstreamHttp,
    private readonly reader: UpstreamTaskState,
  ) {}

  /** True when durable results are on and this succeeded task's results are not stored yet. */
  needsStoring(record: VideoTaskRecord, state: Record<string, unknown>): boolean {
    return this.options.storage !== undefined && record.stored === undefined && state.status === 'succeeded' && mediaUrlsOf(state).length > 0;
  }

  /**
   * storeResults, once per task on this instance at a time: a client polling every few seconds
   * while a large video is copied would otherwise start a full download and upload per query (the
   * compare-and-set keeps one copy, but the others cost the transfer). Joiners report no bytes.
   */
  storeOnce(record: VideoTaskRecord, state: Record<string, unknown>): Promise<{ record: VideoTaskRecord; bytes?: number }> {
    const running = this.storing.get(record.id);
    if (running) return running.then(({ record: stored }) => ({ record: stored }));
    const started = this.storeResults(record, state).finally(() => this.storing.delete(record.id));
    this.storing.set(record.id, started);
    return started;
  }

  /**
   * What a query answers and a callback carries: the stored results' freshly signed URLs in place
   * of the upstream's. A query signs for the base URL it came in on; a callback for the creator's.
   */
  async present(record: VideoTaskRecord, state: Record<string, unknown>, resultBase?: string): Promise<Record<string, unknown>> {
    const storage = this.options.storage;
    if (!storage || !record.stored || !isObject(state.content)) return this.withoutPrivateMedia(record, state);
    const content: Record<string, unknown> = { ...state.content };
    try {
      for (const [field, key] of Object.entries(record.stored.keys)) content[field] = await urlOf(storage, key, resultBase ?? record.resultBase);
      // the stored video's report, next to its URL
      if (record.stored.provenance) content.provenance = record.stored.provenance;
    } catch (error) {
      // a store that cannot sign now is a storage failure like any other: a query answers as
      // storage.onFailure says (the upstream's URLs with a note, or 502 storage_failed); a callback's
      // poll (no request) throws, so it is retried with backoff like the re-hosting itself
      if (resultBase === undefined) throw error;
      return this.withoutPrivateMedia(record, { ...state, storage_error: this.storageProblem(record, error) });
    }
    return { ...state, content };
  }

  /**
   * The state without the result media the caller may not be given as they came (a provider whose
   * results need the operator's credentials, or are bytes: Veo), when they are not stored: a storage
   * failure answers the note alone, never the vendor's URL.
   */
  withoutPrivateMedia(record: VideoTaskRecord, state: Record<string, unknown>): Record<string, unknown> {
    if (!upstreamTasksOf(record.upstream, 'video')?.resultsNeedStorage || !isObject(state.content)) return state;
    const content: Record<string, unknown> = { ...state.content };
    for (const field of MEDIA_FIELDS) if (!record.stored?.keys[field]) delete content[field];
    return { ...state, content };
  }

  /**
   * The state a terminal record keeps. For a provider whose results the caller may not be given as
   * they came (Veo), stored media are named by their keys alone (present() signs them): its URI, or a
   * whole video as bytes, is not kept beside them. Others keep their URLs, which a query answers when
   * the store cannot sign (storage.onFailure).
   */
  recordable(record: VideoTaskRecord, state: Record<string, unknown>): Record<string, unknown> {
    if (!record.stored || !isObject(state.content) || !upstreamTasksOf(record.upstream, 'video')?.resultsNeedStorage) return state;
    const content: Record<string, unknown> = { ...state.content };
    for (const field of Object.keys(record.stored.keys)) delete content[field];
    return { ...state, content };
  }

  /** A failed re-hosting on a query: logged, then a note for the answer (or a 502 storage_failed). */
  storageProblem(record: VideoTaskRecord, error: unknown): string {
    const fields = { taskId: record.id, provider: record.upstream.provider };
    if (error instanceof StorageFailure) return storageFallback(this.options.storage!, this.options.logger, error, fields);
    if (!(error instanceof GatewayError)) throw error;
    this.options.logger.warn({ ...fields, error: error.message }, 'task result could not be downloaded for storage');
    return `the result could not be stored: ${error.message}`;
  }

  /**
   * Re-hosts the video and last frame once and records their keys with compare-and-set. When
   * another writer recorded keys first, ours are deleted and the record with theirs is returned, so
   * however many instances see `succeeded`, one set of objects is kept and every answer names it.
   */
  private async storeResults(record: VideoTaskRecord, state: Record<string, unknown>): Promise<{ record: VideoTaskRecord; bytes?: number }> {
    const storage = this.options.storage!;
    const context: RehostContext = {
      storage,
      http: this.http,
      limits: this.options.limits,
      logger: this.options.logger,
      telemetry: this.options.telemetry,
      allowPrivate: this.options.allowPrivateResultUrls,
      caller: callerOfTask(record),
      provider: record.upstream.provider,
      signal: NEVER_ABORTED,
      ...(await this.downloadHeaders(record)),
    };
    const keys: Record<string, string> = {};
    let bytes = 0;
    // with the `provenance` option, the video's bytes are kept as they are stored and read once (never signed)
    // a host's provenance function that fails costs the report, never the stored video
    const provenance = await this.options.provenance?.forCaller(callerOfTask(record)).catch((error: unknown) => {
      this.options.logger.warn({ taskId: record.id, error: error instanceof Error ? error.message : String(error) }, 'provenance options of the task’s caller not read; the video is not reported');
      return null;
    });
    const video = provenance ? new KeptBytes(PROVENANCE_VIDEO_BYTES) : undefined;
    let report: ProvenanceReport | undefined;
    try {
      for (const [field, url] of mediaUrlsOf(state)) {
        const stored = await storeFromUrl(context, url, field === 'video_url' ? 'video' : 'image', field === 'video_url' ? video : undefined);
        keys[field] = stored.key;
        bytes += stored.bytes;
      }
      if (provenance && video?.overflowed) this.options.logger.info({ taskId: record.id, bytes: video.size }, 'the video is larger than the provenance reader takes; it is stored and not reported');
      else if (provenance && video && keys.video_url) report = await this.reportOf(record, Buffer.concat(video.chunks), provenance.trustAnchors);
    } catch (error) {
      for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
      throw error;
    }
    let current: VideoTaskRecord | undefined = record;
    try {
      for (let round = 0; round < CAS_ROUNDS && current; round += 1) {
        if (current.stored) break;
        const updated = await updateTaskOf(this.options.store, current, { stored: { keys, bytes, ...(report ? { provenance: report } : {}) } });
        if (updated) return { record: updated, bytes };
        current = await getTaskOf(this.options.store, record.id, 'video');
      }
    } catch (error) {
      // the task store failed: copies it does not name would be orphans (a whole video per retried
      // poll), so they go; but a write can land and still fail to answer, so they are deleted only
      // when the record is read back without them (unreadable: kept, an orphan beats a dead URL)
      const now = await getTaskOf(this.options.store, record.id, 'video').catch(() => undefined);
      const ours = now?.stored !== undefined && Object.values(now.stored.keys).some((key) => Object.values(keys).includes(key));
      if (now && !ours) for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
      throw error;
    }
    for (const key of Object.values(keys)) void storage.store.delete(key).catch(() => undefined);
    if (current?.stored) return { record: current };
    throw new Error(`task record kept changing during ${CAS_ROUNDS} compare-and-set rounds`);
  }

  /** The video's report; a reader that cannot load (its optional peer missing) costs the report, not the stored video. */
  private reportOf(record: VideoTaskRecord, video: Buffer, trustAnchors: string | undefined): Promise<ProvenanceReport | undefined> {
    return readProvenance(video, trustAnchors).catch((error: unknown) => {
      this.options.logger.warn({ taskId: record.id, error: error instanceof Error ? error.message : String(error) }, 'the video’s Content Credentials were not read');
      return undefined;
    });
  }

  /** A provider's download credentials for its own result URLs, with the upstream the resolver names for the task now (keys are never stored). */
  private async downloadHeaders(record: VideoTaskRecord): Promise<Pick<RehostContext, 'headersFor'>> {
    const tasks = upstreamTasksOf(record.upstream, 'video');
    if (!tasks?.resultHeaders) return {};
    const upstream = await this.reader.pollUpstream(record);
    return { headersFor: (url) => tasks.resultHeaders!(upstream, url) };
  }
}

/** The Ark `content` fields that are result media URLs (upstreams §2.3), as [field, url]. */
function mediaUrlsOf(state: Record<string, unknown>): Array<[string, string]> {
  if (!isObject(state.content)) return [];
  const content = state.content;
  return MEDIA_FIELDS.flatMap((field) => (typeof content[field] === 'string' && content[field] !== '' ? [[field, content[field]] as [string, string]] : []));
}

const MEDIA_FIELDS = ['video_url', 'last_frame_url'] as const;

/**
 * The upstreams whose videos this gateway can hand out: without result storage, those of a provider
 * whose videos are downloadable only with the operator's credentials are left out; when none is left,
 * the operator's mistake is logged and the caller gets a 500 before any call.
 */
export function upstreamsKeepingResults(options: Pick<ResolvedOptions, 'storage' | 'logger'>, upstreams: readonly Upstream[], model: string): readonly Upstream[] {
  if (options.storage) return upstreams;
  const kept = upstreams.filter((upstream) => !upstreamTasksOf(upstream, 'video')?.resultsNeedStorage);
  if (kept.length > 0) return kept;
  options.logger.error(
    { model, provider: String(upstreams[0]?.provider) },
    `video tasks on provider '${String(upstreams[0]?.provider)}' need the storage option: its videos are downloadable only with the operator's credentials`,
  );
  throw new GatewayError({
    status: 500,
    code: ERROR_CODES.internalError,
    message: `Model '${model.slice(0, 100)}' makes videos the gateway must keep in its result storage, and none is configured (the operator's 'storage' option). Ask the operator to configure it.`,
  });
}
