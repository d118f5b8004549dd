// Work kept for a client's retry (docs/tenancy-and-billing.md "Retries", "The books"): the gateway's
// side of it, apart from the HTTP guard that finds a retry and writes its answer
// (express/idempotency/kept-work.ts). Kept work lives in the Idempotency-Key store under the caller,
// the route and the body's fingerprint:
// - while it runs after its client left, a retry finds it `running` (and, when the caller was answered
//   at its deadline, that deadline: a joining retry waits no longer);
// - its answer is kept with its books (ledger/work-books.ts `keptWork`): not charged on the first try's
//   usage event, but by the event of the retry that receives it, or by its expiry, which the scheduler
//   runs on whichever instance is alive (kept-work-expiry.ts);
// - an output refusal (made, paid and flagged) is kept without books: the first try's event charged it;
// - a delivered answer stays behind, unbilled, for the same client's next retry.
import { createHash } from 'node:crypto';
import type { IdempotencyRecord, IdempotencyStore, KeptWorkRecord } from '../../stores/idempotency/idempotency-store.js';
import { doneRecord } from '../../stores/idempotency/idempotency-store.js';
import type { Caller, RouteName } from '../../types.js';
import type { ResolvedIdempotency } from '../tenancy/resolve-tenancy.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { snapshotCaller } from '../tasks/caller-snapshot.js';
import type { Quotas } from '../tenancy/quotas.js';
import type { KeptWork, Usage } from '../use-case.js';
import { KeptWorkExpiry, keptWorkJobId } from './kept-work-expiry.js';

// a kept record outlives its answer time by this much: its expiry job, not the store's ttl, settles it
const EXPIRY_GRACE_MS = 60_000;
// how often a retry that joined running work looks for its answer
const JOIN_POLL_MS = 250;

type KeepingStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'peek' | 'take'>>;
/** The Idempotency-Key store and its times, when kept work is on. */
type Keeping = ResolvedIdempotency & { store: KeepingStore; keptAnswerMs: number };
type DoneRecord = Extract<IdempotencyRecord, { state: 'done' }>;

/** A whole answer as it was written. */
export interface WrittenAnswer {
  status: number;
  contentType: string;
  body: Buffer | string;
}

/** Whose work is kept, and what it did: the facts its books are made from. */
export interface KeptFrom {
  caller: Caller;
  /** The key the caller authenticated with: never kept in the record (the caller's snapshot leaves it out). */
  bearerKey: string;
  route: RouteName;
  usage: Usage;
  /** The caller was answered at the deadline while the work went on (the vendor was slow), else the client left. */
  late: boolean;
}

/** What a retry that joined running work found. */
export type Joined =
  /** The work's answer is kept: deliver it. */
  | { found: 'answer' }
  /** The first try's answer deadline passed again while the work goes on: answer as it was answered (504), keep it for the next retry. */
  | { found: 'deadline'; answerMs: number }
  /** The retry's own client left: nothing more to do. */
  | { found: 'gone' }
  /** The work ended without an answer, or the wait ran out: the retry runs. */
  | { found: 'nothing' };

export class KeptWorkKeeper {
  /** The scheduler's watch that settles a kept answer nobody took. */
  readonly expiry: KeptWorkExpiry;
  private readonly keeping: Keeping | undefined;

  constructor(
    private readonly options: ResolvedOptions,
    quotas: Quotas,
  ) {
    this.expiry = new KeptWorkExpiry(options, quotas);
    const config = options.idempotency;
    // kept answers need a time to be kept for, and a store that can look without taking, and take once
    this.keeping = config?.keptAnswerMs && config.store.peek && config.store.take ? (config as Keeping) : undefined;
  }

  /** Kept work is on: `idempotency.keptAnswerSeconds` and a store that can peek and take. */
  get enabled(): boolean {
    return this.keeping !== undefined;
  }

  /** The store key of a request's kept work: the caller, the route and the body's fingerprint. */
  keyOf(callerId: string, route: RouteName, fingerprint: string): string {
    return createHash('sha256').update(`kept\0${callerId}\0${route}\0${fingerprint}`).digest('base64url');
  }

  /** What is kept under `key`, without taking it. */
  peek(key: string): Promise<IdempotencyRecord | undefined> {
    return this.on().store.peek(key);
  }

  /** Takes the kept answer under `key` (once across instances); undefined when there is none, or the store failed. */
  async take(key: string): Promise<DoneRecord | undefined> {
    try {
      const taken = await this.on().store.take(key);
      return taken?.state === 'done' ? taken : undefined;
    } catch {
      return undefined;
    }
  }

  /** The work runs on after its client left: a retry finds it running. `answerMs`: the deadline its caller was answered at. */
  running(key: string, answerMs?: number): Promise<void> {
    return this.on().store.finish(key, { state: 'running', fingerprint: key, ...(answerMs !== undefined ? { answerMs } : {}) }, this.on().runningTtlMs);
  }

  /** The work ended without an answer to keep: a retry runs anew. */
  release(key: string): Promise<void> {
    return this.on().store.release(key);
  }

  /**
   * The record of an answer kept for the retry, with its books reckoned now, as the work ended (a
   * caller's retry receives it and is charged for it, or its expiry settles it).
   */
  keptAnswer(key: string, answer: WrittenAnswer, from: KeptFrom): DoneRecord {
    const kept: KeptWorkRecord = {
      caller: snapshotCaller(from.caller, from.bearerKey).caller,
      route: from.route,
      ...this.options.books.keptWork(from.usage, from.late),
    };
    return { ...this.answer(key, answer), kept };
  }

  /** The record of a written answer, as the store keeps it under `key`. */
  private answer(key: string, answer: WrittenAnswer): DoneRecord {
    return doneRecord(key, answer.status, answer.contentType, answer.body) as DoneRecord;
  }

  /** Keeps a record for the retry, and arms its expiry (a kept answer, or one a retry could not receive and put back). */
  async keep(key: string, record: DoneRecord): Promise<void> {
    const { store, keptAnswerMs } = this.on();
    await store.finish(key, record, keptAnswerMs + EXPIRY_GRACE_MS);
    const id = keptWorkJobId(key);
    await this.options.scheduler.schedulePoll(id, keptAnswerMs, `${id}:expiry:${Date.now()}`);
  }

  /**
   * Keeps an output refusal (made, paid, flagged) without books: the first try's own event charged it,
   * so the retry gets it replayed and unbilled, and neither makes nor checks the images again
   * (docs/content-safety.md "What a flagged image costs").
   */
  keepRefusal(key: string, answer: WrittenAnswer): Promise<void> {
    return this.on().store.finish(key, this.answer(key, answer), this.on().keptAnswerMs + EXPIRY_GRACE_MS);
  }

  /** The kept work a delivery of `record` charges: its books, unless a retry was billed for it already (then it goes out unbilled). */
  chargedOnDelivery(record: DoneRecord): KeptWork | undefined {
    return record.kept && !record.delivered ? record.kept : undefined;
  }

  /**
   * `record` was written to a retry, perhaps to a client that is gone: it stays behind, delivered, for
   * that client's next retry (a kept refusal, without books, too: it is never delivered before its first retry).
   */
  async delivered(key: string, record: DoneRecord): Promise<void> {
    if (record.kept || !record.delivered) await this.on().store.finish(key, { ...record, delivered: true }, this.on().keptAnswerMs);
  }

  /**
   * Waits for the running work's answer. Work that missed its first try's answer deadline names it
   * (`answerMs`): the retry waits at most that long from its own arrival, then is answered as its
   * first try was. At most `waitMs` otherwise; `gone` says the retry's own client left.
   */
  async join(key: string, waitMs: number, gone: () => boolean): Promise<Joined> {
    const joinedAt = Date.now();
    let until = joinedAt + waitMs;
    let deadline: number | undefined;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(JOIN_POLL_MS, until - Date.now()))).unref());
      if (gone()) return { found: 'gone' };
      let record: IdempotencyRecord | undefined;
      try {
        record = await this.on().store.peek(key);
      } catch {
        record = undefined;
      }
      if (record?.state === 'done') return { found: 'answer' };
      if (record?.state !== 'running') break;
      if (record.answerMs !== undefined && deadline === undefined) {
        deadline = record.answerMs;
        until = Math.min(until, joinedAt + deadline);
      }
    }
    if (deadline !== undefined && Date.now() >= until) return { found: 'deadline', answerMs: deadline };
    return { found: 'nothing' };
  }

  private on(): Keeping {
    if (!this.keeping) throw new Error('kept work is off: no idempotency.keptAnswerSeconds, or a store without peek and take');
    return this.keeping;
  }
}
