// Following a video task that has a callback (contract §6): a scheduled poll reads the task's state,
// re-hosts a succeeded task's results when durable results are on, hands a new state to delivery
// BEFORE recording it as notified, and says when to poll next. Every write is a compare-and-set, so
// when two instances poll the same task only one acts, and a repeated poll changes nothing.
import { GatewayError } from '../../errors/gateway-error.js';
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { VideoTaskRecord } from '../../stores/tasks/task-store.js';
import { NotMediaResult } from '../results/durable-results.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { CAS_ROUNDS, NEVER_ABORTED, messageOf } from '../tasks/background-work.js';
import { handOverState } from '../tasks/callback-hand-over.js';
import { eventIdFor, pollDelayOf, pollKey } from '../tasks/task-keys.js';
import type { VideoTaskResults } from './video-task-results.js';
import { isPassedStatus, isTerminalStatus } from '../tasks/task-state-order.js';
import type { VideoTaskUsage } from './video-task-usage.js';
import type { UpstreamTaskState } from './upstream-task-state.js';
import { getTaskOf, updateTaskOf } from '../tasks/task-records.js';
import { fallbackPollDelay } from '../vendor-webhooks/vendor-webhook-urls.js';

export class VideoTaskFollower {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly reader: UpstreamTaskState,
    private readonly results: VideoTaskResults,
    private readonly usage: VideoTaskUsage,
  ) {}

  /**
   * A scheduled poll of the task `first` (as the scheduler's job read it), when it has a callback:
   * deliver a state change, say when to poll next. Throws when the poll could not be made: the task
   * service logs it and the scheduler retries it with backoff.
   */
  async poll(first: VideoTaskRecord): Promise<NextPoll | undefined> {
    const taskId = first.id;
    // one hand-over per state per run, however many compare-and-set rounds it takes
    const scheduled = new Set<string>();
    for (let round = 0; round < CAS_ROUNDS; round += 1) {
      // a lost compare-and-set reads the task again
      const record = round === 0 ? first : await getTaskOf(this.options.store, taskId, 'video');
      if (!record?.callback || record.callback.done) return undefined;
      let state = record.result;
      if (!state) {
        const upstream = await this.reader.pollUpstream(record);
        try {
          state = await this.reader.fetchFrom(upstream, record, NEVER_ABORTED);
        } catch (error) {
          // Ark no longer knows the task (deleted or expired): nothing more will happen to it
          if (error instanceof GatewayError && error.status === 404) {
            this.options.logger.warn({ taskId }, 'task no longer exists upstream; following stopped');
            return this.stopFollowing(record);
          }
          throw error;
        }
      }
      if (this.results.needsStoring(record, state)) {
        // recorded (compare-and-set) before anything is delivered; a failure throws, so the
        // scheduler retries this poll, and the re-hosting with it, with backoff
        try {
          await this.results.storeOnce(record, state);
          continue;
        } catch (error) {
          // a result that is not media will not store on any retry: retrying would end in "poll
          // given up" and the callback would never say `succeeded`; it carries the upstream URL and
          // the note a query answers instead (recorded as the result, so it is not downloaded again)
          if (!(error instanceof NotMediaResult)) throw error;
          state = { ...state, storage_error: this.results.storageProblem(record, error) };
        }
      }
      const { callback } = record;
      const status = String(state.status);
      // contract §3, task-state-order.ts: a state the task has passed is neither recorded nor delivered
      const passed = isPassedStatus(status, record.status) || isPassedStatus(status, callback.notifiedStatus);
      const terminal = !passed && isTerminalStatus(status);
      const changed = !passed && status !== callback.notifiedStatus;
      const polls = callback.polls + 1;
      const expired = !terminal && Date.now() - record.createdAt > this.options.callbacks.maxFollowMs;
      const eventId = eventIdFor(record.id, status);
      if (changed && !scheduled.has(eventId)) {
        // handed to delivery BEFORE it is recorded as notified: a failure in between leaves it
        // unrecorded, so the retried poll hands it over again (same event id, queued once); the
        // other order would record a state that no job will ever deliver
        // contract §6.2: the body a query returns
        await handOverState(this.options, record, status, await this.results.present(record, state));
        scheduled.add(eventId);
      }
      const reports = terminal && !record.usageReported;
      const updated = await updateTaskOf(this.options.store, record, {
        ...(passed ? {} : { status, ...(terminal ? { result: this.results.recordable(record, state) } : {}) }),
        ...(reports ? { usageReported: true } : {}),
        callback: { ...callback, polls, ...(changed ? { notifiedStatus: status } : {}), done: terminal || expired },
      });
      if (!updated) continue;
      if (!passed && status !== record.status) this.usage.recordTransition(record, state);
      if (reports) this.usage.terminalReached(updated, state);
      if (terminal || expired) return undefined;
      // slower while the vendor is expected to call back (vendor-webhooks/): the polls are then the fallback
      return { delayMs: fallbackPollDelay(record, pollDelayOf(this.options.callbacks.pollIntervalsMs.video, polls)), key: pollKey(record.id, polls) };
    }
    // thrown, not returned: giving up here would end following with nothing in the log
    throw new Error(`task record kept changing during ${CAS_ROUNDS} compare-and-set rounds`);
  }

  /**
   * A state a query saw (the record already holds it): its callback is handed to delivery now, not at
   * the next scheduled poll (docs/video-tasks-and-callbacks.md "When callbacks are sent"). The same event id as the
   * poll's, handed over before it is recorded as notified, so a poll racing this one queues it once
   * (or a receiver deduplicates a second delivery, contract §6.4). Never throws: the query is
   * answered either way, and the next poll delivers what this could not.
   */
  async deliverSeen(record: VideoTaskRecord, state: Record<string, unknown>): Promise<void> {
    const { callback } = record;
    const status = String(state.status);
    if (!callback || callback.done || status === callback.notifiedStatus || isPassedStatus(status, callback.notifiedStatus)) return;
    try {
      await handOverState(this.options, record, status, await this.results.present(record, state));
      // a terminal state handed over ends following: the scheduled poll finds `done` and stops
      await updateTaskOf(this.options.store, record, { callback: { ...callback, notifiedStatus: status, done: isTerminalStatus(status) } });
    } catch (error) {
      this.options.logger.warn({ taskId: record.id, status, error: messageOf(error) }, 'callback of a state seen by a query not queued; the next poll delivers it');
    }
  }

  private async stopFollowing(record: VideoTaskRecord): Promise<undefined> {
    if (record.callback) await updateTaskOf(this.options.store, record, { callback: { ...record.callback, done: true } });
    return undefined;
  }
}
