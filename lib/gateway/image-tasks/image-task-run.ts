// The run of one image task in this process (docs/image-tasks.md): when the fair queue gives it a slot,
// the task is marked running, the same image use case as the synchronous route runs (image-pipeline.ts),
// and its outcome is recorded as the terminal state, unless a cancel or the watch ended the task first.
// A single call to an upstream that offers its own tasks is handed to that task instead, and followed
// from any instance (upstream-image-task.ts).
import type { ImageTaskState, TaskChanges, ImageTaskRecord } from '../../stores/tasks/task-store.js';
import type { UpstreamImageTasks } from '../../providers/provider.js';
import { upstreamTasksOf } from '../../providers/registry.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { type WholeAnswer, runBudgetOf, runPreparedImage, singleNativeCall } from '../image-pipeline/image-pipeline.js';
import { leaseEnd, nextLookAt } from '../leases/lease-terms.js';
import { answeredWith, idOfFailure } from '../ledger/vendor-work.js';
import { messageOf } from '../tasks/background-work.js';
import { type Outcome, type Usage, attempting, settle, usageFor } from '../use-case.js';
import type { ImageTaskEnding } from './image-task-ending.js';
import { terminalViewOf, viewOf } from './image-task-view.js';
import { watchAt } from './image-task-watch.js';
import { type LocalRun, type LocalRuns, TaskNotRun } from './local-runs.js';
import { followAt } from './upstream-image-task.js';
import { pollDelayOf } from '../tasks/task-keys.js';
import { getTaskOf, updateTaskOf } from '../tasks/task-records.js';
import { fallbackPollDelay, vendorWebhookUrl } from '../vendor-webhooks/vendor-webhook-urls.js';

type NativeCall = NonNullable<ReturnType<typeof singleNativeCall>>;

export class ImageTaskRunner {
  constructor(
    private readonly deps: GatewayDeps,
    private readonly runs: LocalRuns,
    private readonly ending: ImageTaskEnding,
  ) {}

  /** The run of one task in this process: marked running, the use case, the terminal state recorded. */
  async run(taskId: string): Promise<void> {
    const local = this.runs.get(taskId);
    if (!local) return;
    const { options } = this.deps;
    const usage = usageFor('');
    local.usage = usage;
    let record = this.runs.closing ? undefined : await getTaskOf(options.store, taskId, 'image').catch(() => undefined);
    if (!record || record.status !== 'queued') {
      // cancelled while it waited, or ended by the watch: nothing to run
      this.runs.letGo(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    usage.model = record.model;
    const startedAt = Date.now();
    const deadline = startedAt + runBudgetOf(this.deps, local.ready);
    // the lease renewed meanwhile is a change of this process's own: written over, while the task is still queued
    const running = await this.updateOwn(taskId, 'queued', (current) => ({
      status: 'running',
      image: { ...current.image, startedAt, deadline, leaseUntil: leaseEnd(options.imageTasks.lease, startedAt) },
    })).catch(() => undefined);
    if (!running) {
      this.runs.letGo(taskId);
      local.settle({ ok: false, error: new TaskNotRun(taskId), usage });
      return;
    }
    record = running;
    options.telemetry.recordTaskTransition('running');
    await watchAt(this.deps, record.id, nextLookAt(running.image.leaseUntil, deadline)).catch((error: unknown) =>
      options.logger.warn({ taskId, error: messageOf(error) }, 'image task watch not scheduled'),
    );
    this.ending.deliver(record, viewOf(record, 'running'));
    const native = singleNativeCall(local.ready);
    const upstreamTasks = native ? upstreamTasksOf(native.upstream, 'image') : undefined;
    if (native && upstreamTasks?.offers(native.upstream.model ?? record.model, native.request)) {
      await this.submitUpstream(record, local, native, upstreamTasks, usage);
      return;
    }
    const outcome = await settle(usage, () => runPreparedImage(this.deps, usage, local.ready));
    this.runs.letGo(taskId);
    let recorded: Outcome<WholeAnswer> | undefined;
    try {
      recorded = await this.finish(record, outcome, local);
    } catch (error) {
      options.logger.error({ taskId, error: messageOf(error) }, 'image task result not recorded');
    }
    // only the outcome the task records is answered to a waiting caller: a run that lost to a cancel or
    // to the watch (which refunded it), or whose answer could not be kept, must not hand out images
    // the task and its usage event do not show
    local.settle(recorded ?? { ok: false, error: new TaskNotRun(taskId), usage });
  }

  /**
   * Hands the work to the upstream's own task (DashScope's asynchronous synthesis): once it has an
   * upstream id, the task leaves this process's queue, and the watch jobs follow it from any instance.
   */
  private async submitUpstream(record: ImageTaskRecord, local: LocalRun, native: NativeCall, tasks: UpstreamImageTasks, usage: Usage): Promise<void> {
    const { options } = this.deps;
    const { upstream, request, call } = native;
    const attempt = attempting(usage, upstream.provider, upstream.model);
    // a vendor that calls back is given the task's own webhook URL (vendor-webhooks/)
    const vendorWebhook = vendorWebhookUrl(options.vendorWebhooks, upstream.provider, record.id);
    const submitted = await settle(usage, () => tasks.submit(vendorWebhook ? { ...call, vendorWebhook } : call, request, upstream, upstream.model ?? request.model));
    // booked under the id the vendor answered: the task's, or the request id of a submit it refused or failed
    answeredWith(attempt, submitted.ok ? submitted.answer : idOfFailure(submitted.error));
    if (!submitted.ok) {
      this.runs.letGo(record.id);
      await this.finish(record, { ok: false, error: submitted.error, usage }, local).catch((error: unknown) =>
        options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task result not recorded'),
      );
      local.settle({ ok: false, error: submitted.error, usage });
      return;
    }
    // from here any instance follows the upstream's task: no lease is held on it any more
    const updated = await this.updateOwn(record.id, 'running', (current) => {
      const { leaseUntil: _held, ...image } = current.image;
      return {
        image: { ...image, onUpstream: true, deadline: Date.now() + tasks.lifetimeMs } satisfies ImageTaskState,
        upstream: {
          provider: upstream.provider,
          baseURL: upstream.baseURL,
          taskId: submitted.answer,
          ...(upstream.model !== undefined && upstream.model !== record.model ? { model: upstream.model } : {}),
          ...(vendorWebhook ? { callsBack: true } : {}),
        },
      };
    });
    // cancelled while it was submitted: the upstream task runs on unobserved (logged), the task stays cancelled
    this.runs.letGo(record.id);
    if (!updated) options.logger.warn({ taskId: record.id }, 'image task ended while its upstream task was submitted; the upstream task is not followed');
    else
      await followAt(this.deps, record.id, fallbackPollDelay(updated, pollDelayOf(options.callbacks.pollIntervalsMs.image, 0))).catch((error: unknown) =>
        options.logger.error({ taskId: record.id, error: messageOf(error) }, 'image task poll not scheduled'),
      );
    local.settle({ ok: false, error: new TaskNotRun(record.id), usage });
  }

  /**
   * Records the run's outcome as the terminal state, unless a cancel or the watch got there first;
   * returns the outcome recorded (a failure when the answer could not be kept), undefined when another
   * writer ended the task.
   */
  private async finish(record: ImageTaskRecord, outcome: Outcome<WholeAnswer>, local: LocalRun): Promise<Outcome<WholeAnswer> | undefined> {
    const { view, error } = terminalViewOf(record, outcome, outcome.usage.provider ?? 'upstream');
    const finishedAt = Date.now();
    const updated = await this.updateOwn(record.id, 'running', (current): TaskChanges => ({ status: view.status, result: { ...view }, usageReported: true, image: { ...current.image, finishedAt } }));
    // another writer ended it first (a cancel, or the watch past the deadline): its state stands
    if (!updated) return undefined;
    await this.ending.ended(updated, view, { usage: outcome.usage, end: error === undefined ? {} : { error }, caller: local.caller });
    return view.status === 'succeeded' ? outcome : { ok: false, error, usage: outcome.usage };
  }

  /**
   * Writes `changes` of this process's own run while the task is still `status`: a renewal of its
   * lease (which bumps the version) is read over; another writer's end (a cancel, the watch) stands,
   * and undefined is returned.
   */
  private async updateOwn(taskId: string, status: string, changes: (current: ImageTaskRecord) => TaskChanges): Promise<ImageTaskRecord | undefined> {
    const { store } = this.deps.options;
    for (let round = 0; round < 8; round += 1) {
      const current = await getTaskOf(store, taskId, 'image');
      if (!current || current.status !== status || current.image.onUpstream) return undefined;
      const updated = await updateTaskOf(store, current, changes(current));
      if (updated) return updated;
    }
    throw new Error(`task ${taskId} kept changing while its run wrote it`);
  }
}
