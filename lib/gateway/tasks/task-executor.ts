// What one kind of task does at each step of the one task lifecycle (docs/architecture.md "One task
// lifecycle"): the task service (task-service.ts) owns the verbs and the scheduler's jobs and hands each
// to the executor of the task's kind, as one worker dispatches every job of a queue on its name. An
// executor says how its kind runs: where the work happens, what is charged, what a caller reads.
import type { NextPoll } from '../../stores/scheduling/job-scheduler.js';
import type { TaskKind, TaskRecordOf } from '../../stores/tasks/task-store.js';
import type { Quoted } from '../tenancy/quote.js';
import type { Outcome, UseCaseRequest } from '../use-case.js';

/** The plain data one kind of task exchanges with its routes. */
export interface TaskTypes {
  /** What a create is given (the validated request, the caller's key, the callback URL unchecked). */
  create: unknown;
  /** What an accepted create answers. */
  created: unknown;
  /** The task as a query or a cancel answers it. */
  read: unknown;
}

/** The executor of the tasks of kind `K`. */
export interface TaskExecutor<K extends TaskKind, T extends TaskTypes> {
  readonly kind: K;
  /** The prefix of the ids its tasks are given (`<prefix>_<22 characters>`): callers hold ids, so it never changes. */
  readonly idPrefix: string;
  /**
   * Checks, resolves and charges a create, records the task and starts its work; or, for `Prefer:
   * dry-run`, answers the quote of the charge with no task. Bad input fails here, with nothing kept.
   */
  create(from: UseCaseRequest, input: T['create']): Promise<Outcome<T['created'] | Quoted>>;
  /** The caller's task as it stands; another caller's, an unknown or a malformed id is the kind's one 404. */
  get(from: UseCaseRequest, id: string): Promise<Outcome<T['read']>>;
  /** Ends the caller's task `cancelled`, or says why it cannot be. */
  cancel(from: UseCaseRequest, id: string): Promise<Outcome<T['read']>>;
  /**
   * One scheduled job of a task of this kind (the scheduler's poll queue): `record` as just read; its
   * work looked at, its state recorded by compare-and-set, and when to look again (undefined: never).
   */
  follow(record: TaskRecordOf<K>): Promise<NextPoll | undefined>;
  /** The router closes: what this process holds of the kind's tasks is ended or handed on. */
  close(): Promise<void>;
}
