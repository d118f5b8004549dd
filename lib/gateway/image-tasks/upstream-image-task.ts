// An image task that runs on its upstream's own task (DashScope's asynchronous synthesis, Replicate's
// predictions; docs/image-tasks.md): once the run here handed the work over, no instance holds it; the
// scheduler's watch jobs poll the upstream from any instance until it ends, keep its images as the
// synchronous route would, and record the terminal state. A task cancelled meanwhile is followed too,
// for its books: what the upstream made is known only when it ends.
import { GatewayError } from '../../errors/gateway-error.js';
import type { CallContext } from '../../providers/call-context.js';
import { upstreamTasksOf } from '../../providers/registry.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { Upstream } from '../../types.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { WholeAnswer } from '../image-pipeline/image-pipeline.js';
import { rehostImageAnswer } from '../results/rehost-images.js';
import { NEVER_ABORTED } from '../tasks/background-work.js';
import { callerOfTask } from '../tasks/caller-snapshot.js';
import { followKey, pollDelayAfter } from '../tasks/task-keys.js';
import { resolveTaskUpstream } from '../tasks/task-upstream.js';
import { type Outcome, type Usage, type UseCaseRequest, attempting, settle, usageFor } from '../use-case.js';
import { checkTaskOutput } from '../moderation/task-moderation.js';
import type { ImageTaskEnding } from './image-task-ending.js';
import { terminalViewOf, viewOf } from './image-task-view.js';
import { updateTaskOf } from '../tasks/task-records.js';
import { fallbackPollDelay } from '../vendor-webhooks/vendor-webhook-urls.js';

/** Arms the first poll of a task just handed to its upstream's own task. */
export function followAt(deps: GatewayDeps, taskId: string, delayMs: number): Promise<void> {
  return deps.options.scheduler.schedulePoll(taskId, delayMs, followKey(taskId, 'start'));
}

export class UpstreamImageTask {
  constructor(
    private readonly deps: GatewayDeps,
    private readonly ending: ImageTaskEnding,
  ) {}

  /** One poll of a task running on the upstream's own task: its end recorded, or when to look again. */
  async follow(record: ImageTaskRecord): Promise<NextPoll | undefined> {
    const { options } = this.deps;
    const upstream = await this.upstreamOf(record);
    const tasks = upstreamTasksOf(upstream, 'image');
    if (!tasks) throw new Error(`provider ${upstream.provider} has no image tasks`);
    const call: CallContext = { http: this.deps.http, signal: NEVER_ABORTED, limits: options.limits };
    const state = await tasks.read(call, upstream, record.upstream.taskId);
    if (state.status === 'running') {
      if (Date.now() < record.image.deadline) return this.nextFollow(record);
      return this.endFollowed(
        record,
        { ok: false, error: GatewayError.noImage(upstream.provider, '; the upstream task did not end within its lifetime'), usage: followedUsage(record, upstream) },
        true,
      );
    }
    const usage = followedUsage(record, upstream);
    if (state.status === 'failed') return this.endFollowed(record, { ok: false, error: state.error, usage }, state.mayHaveRun === true);
    const { response } = state;
    usage.upstreamRequestId = response.extra.request_id || undefined;
    usage.upstreamImages = response.data.length;
    response.data = response.data.slice(0, record.image.images);
    usage.images = response.data.length;
    // durable results, as the synchronous route stores them; a storage failure throws, and the
    // scheduler polls again later (the upstream keeps the task for a day)
    const from: UseCaseRequest = {
      caller: callerOfTask(record),
      hostRequest: undefined,
      resultBase: record.resultBase ?? '',
      cancel: { clientGone: NEVER_ABORTED, signal: NEVER_ABORTED },
      requestId: record.id,
    };
    // the caller's output checks before anything is stored or answered (docs/content-safety.md); a refusal ends the task
    const checked = await settle(usage, () => checkTaskOutput(this.deps, call, from, record, usage, response));
    if (!checked.ok) return this.endFollowed(record, { ok: false, error: checked.error, usage }, true);
    await rehostImageAnswer(this.deps, usage, from, response, checked.answer);
    return this.endFollowed(record, { ok: true, answer: { kind: 'image', response }, usage });
  }

  private async endFollowed(record: ImageTaskRecord, outcome: Outcome<WholeAnswer>, mayHaveRun = false): Promise<undefined> {
    const { store } = this.deps.options;
    // the vendors bill what their task made: a failed upstream task made nothing; one the vendor no
    // longer knows, or that never ended, may have made what was asked (docs/tenancy-and-billing.md "The books")
    const attempt = outcome.usage.attempts?.at(-1);
    if (attempt) {
      attempt.outcome = outcome.ok ? 'made' : mayHaveRun ? 'unknown' : 'failed';
      attempt.images = outcome.ok ? (outcome.usage.upstreamImages ?? outcome.usage.images) : mayHaveRun ? record.image.images : 0;
    }
    if (record.status === 'cancelled') {
      // cancelled while the upstream worked: the caller lost what it made by its own act
      outcome.usage.lostBy = 'cancelled';
      const updated = await updateTaskOf(store, record, { usageReported: true, image: { ...record.image, finishedAt: Date.now() } });
      if (updated)
        await this.ending.ended(
          updated,
          viewOf(record, 'cancelled'),
          { usage: outcome.usage, end: { error: GatewayError.invalidRequest('the task was cancelled') }, caller: undefined },
          { told: true },
        );
      return undefined;
    }
    const { view, error } = terminalViewOf(record, outcome, record.upstream.provider);
    const updated = await updateTaskOf(store, record, {
      status: view.status,
      result: { ...view },
      usageReported: true,
      image: { ...record.image, finishedAt: Date.now() },
    });
    if (updated) await this.ending.ended(updated, view, { usage: outcome.usage, end: error === undefined ? {} : { error }, caller: undefined });
    return undefined;
  }

  /** The resolver asked again with the task's caller (keys are never stored), for the provider and base the task runs on. */
  private async upstreamOf(record: ImageTaskRecord): Promise<Upstream> {
    const upstream = await resolveTaskUpstream(this.deps.options, record, record.image.route, callerOfTask(record), undefined);
    if (!upstream) throw new Error(`resolveUpstream no longer names a ${record.upstream.provider} upstream for image task ${record.id}`);
    return upstream;
  }

  /** The next poll, on the image schedule (`callbacks.pollIntervalsMs.image`) from when the task started running. */
  private nextFollow(record: ImageTaskRecord): NextPoll {
    // slower while the vendor is expected to call back (vendor-webhooks/): the polls are then the fallback
    const every = fallbackPollDelay(record, pollDelayAfter(this.deps.options.callbacks.pollIntervalsMs.image, Date.now() - (record.image.startedAt ?? record.createdAt)));
    // the same key on every instance that polls in the same interval: the next poll is queued once
    return { delayMs: every, key: followKey(record.id, every) };
  }
}

/** What a followed upstream task did, for its terminal usage event. */
function followedUsage(record: ImageTaskRecord, upstream: Upstream): Usage {
  const usage = usageFor(record.model);
  // the one vendor call of the task, by its id: what a host joins with the vendor's usage export
  attempting(usage, upstream.provider, upstream.model).id = record.upstream.taskId;
  usage.imagesAsked = record.image.images;
  return usage;
}
