// Health shared between instances through the host's Redis client (`routing.store`,
// docs/routing-and-health.md "Several instances"). A state change is written to one hash (a field per
// upstream key) and published on a channel; every instance subscribes and applies it to its local map,
// and reads the whole hash when it starts and every `SYNC_MS` (a message missed while disconnected is
// caught up). The half-open trial is claimed once per cluster (`SET <prefix>trial:<key> NX PX`).
// Requests never wait for Redis: a lost Redis leaves each instance with its own health and trial.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../options/host-hooks.js';
import type { RoutingHealthClient, RoutingHealthSubscriber, UpstreamHealthReason, UpstreamIdentity } from '../../options/routing-options.js';

/** One upstream's shared state. */
export interface SharedRecord {
  key: string;
  upstream: UpstreamIdentity;
  state: 'open' | 'closed';
  reason: UpstreamHealthReason;
  since: number;
  openUntil?: number;
  /** The one caller it opened or closed for (docs/routing-and-health.md "Whose failure"): sent on the channel, never kept in the hash. */
  caller?: string;
}

interface Message extends SharedRecord {
  /** The instance that wrote it: its own messages are not applied twice. */
  from: string;
}

// the catch-up read's period: a missed message costs at most this much of sending to an open upstream
const SYNC_MS = 5_000;

/** How long a trial's claim holds when its instance never frees it (it stopped): the others then claim again. */
export const TRIAL_LEASE_MS = 60_000;

// compare-and-delete, atomic in Redis: the claim is deleted only when it still holds this instance's id
const FREE_OWN_CLAIM = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

export class SharedHealth {
  private readonly id = randomUUID();
  private readonly hash: string;
  private readonly channel: string;
  private readonly trialPrefix: string;
  private subscriber: RoutingHealthSubscriber | undefined;
  private timer: NodeJS.Timeout | undefined;
  private warned = false;
  private closed = false;

  constructor(
    private readonly client: RoutingHealthClient,
    prefix: string,
    private readonly logger: Logger,
    private readonly apply: (record: SharedRecord) => void,
    private readonly now: () => number,
  ) {
    this.hash = `${prefix}state`;
    this.channel = `${prefix}changes`;
    this.trialPrefix = `${prefix}trial:`;
  }

  /** Subscribes and reads the current states; never throws (a Redis that is down is logged once). */
  start(): void {
    try {
      const subscriber = this.client.duplicate();
      this.subscriber = subscriber;
      subscriber.on('error', (error: Error) => this.lost(error));
      subscriber.on('message', (channel: string, text: string) => {
        if (channel === this.channel) this.receive(text);
      });
      subscriber.subscribe(this.channel).catch((error: unknown) => this.lost(error));
    } catch (error) {
      this.lost(error);
    }
    this.sync();
    this.timer = setInterval(() => this.sync(), SYNC_MS);
    this.timer.unref();
  }

  /** Writes and announces a state change, in the background. */
  publish(record: SharedRecord): void {
    if (this.closed || !this.ready()) return;
    const text = JSON.stringify({ ...record, from: this.id } satisfies Message);
    // one caller's state is short and per tenant: the channel only, so the hash holds one field per upstream
    if (record.caller !== undefined) {
      this.client.publish(this.channel, text).catch((error: unknown) => this.lost(error));
      return;
    }
    const written = record.state === 'open' ? this.client.hset(this.hash, record.key, text) : this.client.hdel(this.hash, record.key);
    Promise.all([written, this.client.publish(this.channel, text)]).catch((error: unknown) => this.lost(error));
  }

  /**
   * Claims the cluster's half-open trial of `key` for this instance: true when it holds it, false when
   * another instance does. Undefined when the store cannot claim now (no `set`, not connected): the
   * caller then sends its own trial, as without a store.
   */
  claimTrial(key: string): Promise<boolean> | undefined {
    const { client } = this;
    if (this.closed || !client.set || (client.status !== undefined && client.status !== 'ready')) return undefined;
    return client.set(this.trialPrefix + key, this.id, 'PX', TRIAL_LEASE_MS, 'NX').then(
      (answer) => answer === 'OK',
      (error: unknown) => {
        this.lost(error);
        throw error;
      },
    );
  }

  /**
   * Frees the claim once the trial's outcome is known (its close or open is published), in the
   * background, and only while it is still this instance's: a claim whose lease ran out may have been
   * taken by another instance since, and a plain DEL would free that one (docs/routing-and-health.md
   * "Several instances"). A client without `eval` leaves the claim to lapse with its lease.
   */
  endTrial(key: string): void {
    if (this.closed || !this.client.eval || !this.ready()) return;
    this.client.eval(FREE_OWN_CLAIM, 1, this.trialPrefix + key, this.id).catch((error: unknown) => this.lost(error));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (!subscriber) return;
    // a subscriber that never connected would wait for its connection to QUIT
    if (subscriber.disconnect) subscriber.disconnect();
    else await subscriber.quit().catch(() => undefined);
  }

  private sync(): void {
    if (this.closed || !this.ready()) return;
    this.client.hgetall(this.hash).then(
      (all) => {
        const now = this.now();
        for (const text of Object.values(all ?? {})) {
          const record = parse(text);
          if (record && record.caller === undefined && record.state === 'open' && (record.openUntil ?? 0) > now) this.apply(record);
        }
      },
      (error: unknown) => this.lost(error),
    );
  }

  private receive(text: string): void {
    const record = parse(text);
    if (record && record.from !== this.id) this.apply(record);
  }

  // a client still connecting queues the command (ioredis's offline queue); one the host ended takes none
  private ready(): boolean {
    return this.client.status !== 'end';
  }

  private lost(error: unknown): void {
    if (this.warned || this.closed) return;
    this.warned = true;
    this.logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'routing.store is unreachable: each instance keeps its own upstream health until it is back');
  }
}

function parse(text: string): Message | undefined {
  try {
    const value = JSON.parse(text) as Partial<Message>;
    if (
      typeof value.key !== 'string' ||
      (value.state !== 'open' && value.state !== 'closed') ||
      typeof value.since !== 'number' ||
      typeof value.upstream !== 'object' ||
      value.upstream === null ||
      (value.caller !== undefined && typeof value.caller !== 'string')
    )
      return undefined;
    return value as Message;
  } catch {
    return undefined;
  }
}
