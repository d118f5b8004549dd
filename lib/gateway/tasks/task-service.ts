// The one task service (docs/architecture.md "One task lifecycle, a kind per executor"): every kind of
// task is created, read, cancelled and followed through the same verbs, and the scheduler's jobs of
// every task come here too. Each verb goes to the executor of the task's kind, as one worker runs every
// job of a queue and dispatches on its name: the routes say the kind they serve, a scheduled job's
// record says its own (`kind`). What the kinds share (the record, the callback, the scheduler's keys,
// the states' order, the terminal usage event) is the task core beside this file; how each kind runs is
// its executor's, given to the service by the list of kinds (gateway/task-kinds.ts), so this core
// imports no kind.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { TaskKind } from '../../stores/tasks/task-store.js';
import type { ResolvedOptions } from '../resolve-options.js';
import type { Quoted } from '../tenancy/quote.js';
import type { Outcome, UseCaseRequest } from '../use-case.js';
import { messageOf } from './background-work.js';
import type { TaskExecutor, TaskTypes } from './task-executor.js';
import { isTaskId } from './task-records.js';
import type { TaskWatches } from './task-jobs.js';

/** What each kind of task exchanges with its routes, by kind. */
export type TaskTypeMap = { readonly [K in TaskKind]: TaskTypes };

/** The executor of every kind: the compiler holds the list to the kinds a task record may have. */
export type TaskExecutors<M extends TaskTypeMap> = { readonly [K in TaskKind]: TaskExecutor<K, M[K]> };

export class TaskService<M extends TaskTypeMap> implements TaskWatches {
  /** The id prefixes of every kind: the scheduler's jobs of other ids are not tasks'. */
  private readonly prefixes: ReadonlySet<string>;

  constructor(
    private readonly options: Pick<ResolvedOptions, 'store' | 'logger'>,
    private readonly executors: TaskExecutors<M>,
  ) {
    this.prefixes = new Set(Object.values(executors).map((executor) => executor.idPrefix));
  }

  /** Creates a task of `kind` for the caller, or answers the quote of one (`Prefer: dry-run`). */
  create<K extends TaskKind>(kind: K, from: UseCaseRequest, input: M[K]['create']): Promise<Outcome<M[K]['created'] | Quoted>> {
    return this.executor(kind).create(from, input);
  }

  /** The caller's task of `kind` as it stands; any other id is the kind's one 404. */
  get<K extends TaskKind>(kind: K, from: UseCaseRequest, id: string): Promise<Outcome<M[K]['read']>> {
    return this.executor(kind).get(from, id);
  }

  /** Ends the caller's task of `kind` `cancelled`, or answers why it cannot be. */
  cancel<K extends TaskKind>(kind: K, from: UseCaseRequest, id: string): Promise<Outcome<M[K]['read']>> {
    return this.executor(kind).cancel(from, id);
  }

  /** The scheduler's jobs whose id is a task's (tasks/task-jobs.ts). */
  owns(taskId: string): boolean {
    return isTaskId(taskId, this.prefixes);
  }

  /**
   * One scheduled job of a task: its record read, and handed to the executor of its kind. Nothing to do
   * for a task that is gone. Throws (logged here) when the job could not be done: the scheduler retries
   * it with backoff.
   */
  async watch(taskId: string): Promise<NextPoll | undefined> {
    try {
      const record = await this.options.store.getTask(taskId);
      if (!record) return undefined;
      switch (record.kind) {
        case 'image':
          return await this.executors.image.follow(record);
        case 'video':
          return await this.executors.video.follow(record);
        default: {
          // a kind with no case here does not compile; a record of no known kind (one an earlier version
          // wrote, before records said their kind) is not followed
          const unknown: never = record;
          this.options.logger.warn({ taskId, kind: String((unknown as { kind?: unknown }).kind) }, 'a task record of no known kind is not followed');
          return undefined;
        }
      }
    } catch (error) {
      this.options.logger.warn({ taskId, error: messageOf(error) }, 'task poll failed; retrying with backoff');
      throw error;
    }
  }

  /** The router closes: each kind ends or hands on what this process holds. */
  async close(): Promise<void> {
    await Promise.all(Object.values(this.executors).map((executor) => executor.close()));
  }

  private executor<K extends TaskKind>(kind: K): TaskExecutors<M>[K] {
    return this.executors[kind];
  }
}
