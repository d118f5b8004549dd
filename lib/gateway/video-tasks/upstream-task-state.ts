// A stored task's state as its upstream reports it now (contract §4.2): the resolver is asked again
// (keys are never stored, so they can rotate), the upstream of the provider that created the task is
// called, and its answer becomes the caller's task object. Used by a query and by a background poll
// of a video task; the upstream is found as every kind of task finds it (tasks/task-upstream.ts).
import { GatewayError } from '../../errors/gateway-error.js';
import type { CallContext } from '../../providers/call-context.js';
import { requireUpstreamTasks } from '../../providers/registry.js';
import type { VideoTaskRecord } from '../../stores/tasks/task-store.js';
import type { UpstreamHttp } from '../../transport/upstream-http.js';
import type { Caller, Upstream } from '../../types.js';
import type { ResolveUpstreamInput } from '../../options/host-hooks.js';
import { secretsOf } from '../routing/fallback.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { resolveTaskUpstream } from '../tasks/task-upstream.js';
import { messageOf } from '../tasks/background-work.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';

export class UpstreamTaskState {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly http: UpstreamHttp,
  ) {}

  /** The state for a query: the request's own caller (same id as the owner, fresh from verifyKey). */
  async fetchState(record: VideoTaskRecord, caller: Caller, req: ResolveUpstreamInput['req'], signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.fetchFrom(await this.taskUpstream(record, caller, req), record, signal);
  }

  /**
   * The upstream for a background poll, asked with the creator's caller (caller-snapshot.ts). A
   * refusal (null, or a throw) fails this poll, to be retried, and never ends following: a plan
   * lookup can fail for a while, and the task keeps running at Ark either way.
   */
  async pollUpstream(record: VideoTaskRecord): Promise<Upstream> {
    try {
      return await this.taskUpstream(record, callerOfTask(record), undefined);
    } catch (error) {
      throw new Error(`resolveUpstream gave no ${record.upstream.provider} upstream for the task's caller: ${messageOf(error)}`, { cause: error });
    }
  }

  async fetchFrom(upstream: Upstream, record: VideoTaskRecord, signal: AbortSignal): Promise<Record<string, unknown>> {
    try {
      const tasks = requireUpstreamTasks(upstream, 'video', 'video.tasks', this.options.logger);
      const state = await this.options.telemetry.taskPoll(upstream, record.model, record.trace, () => tasks.read(this.call(signal), upstream, record.upstream.taskId));
      return tasks.view(state, record.id, record.model);
    } catch (error) {
      throw error instanceof GatewayError ? error.withoutSecrets(secretsOf(upstream)) : error;
    }
  }

  private async taskUpstream(record: VideoTaskRecord, caller: Caller, req: ResolveUpstreamInput['req']): Promise<Upstream> {
    const upstream = await resolveTaskUpstream(this.options, record, 'video.tasks', caller, req);
    if (!upstream) {
      this.options.logger.error({ model: record.model }, `resolveUpstream no longer names a ${record.upstream.provider} upstream for a stored task`);
      throw GatewayError.internal();
    }
    return upstream;
  }

  private call(signal: AbortSignal): CallContext {
    return { http: this.http, signal, limits: this.options.limits };
  }
}
