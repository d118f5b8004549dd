// The keep-alive pools of one UpstreamHttp (upstream-http.ts): one undici Pool per origin and per
// checked lookup, a bound on the calls waiting for a connection, and a bound on the pools kept.
// Everything here belongs to its UpstreamHttp instance: two routers in one process share no pool,
// no connection and no resolver identity.
// The parsed request URLs of one UpstreamHttp are kept here too: most calls go to the same few
// endpoints, and parsing one costs a URL object and its options per call (docs/benchmarks.md);
// bounded (cleared when full), kept by the instance, never shared between routers.
import type { LookupFunction } from 'node:net';
import { Pool, buildConnector } from 'undici';
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Resolver } from '../security/public-url.js';
import { pinnedLookup, publicLookup } from './checked-lookups.js';
import type { CallCounter } from './exchange.js';
import type { UpstreamPool, UpstreamRequest } from './upstream-call.js';

/** One pool and how many calls it holds (running or waiting for a connection), for the queue limit. */
export interface OriginPool extends CallCounter {
  pool: Pool;
}

/** Pools kept at most; past this, idle ones are closed (a pool per result host or callback address). */
const MAX_POOLS = 256;

export class OriginPools {
  private readonly pools = new Map<string, OriginPool>();
  /** Each resolver (tests replace DNS) gets pools of its own: the lookup is the pool's. */
  private readonly resolverIds = new WeakMap<Resolver, number>();
  private nextResolverId = 1;

  constructor(private readonly limits: UpstreamPool) {}

  /**
   * The pool of one origin. When all its connections are busy and `limits.queue` requests already wait
   * for one, this request fails now with 503 upstream_busy, before anything is sent: an unbounded queue
   * behind a silent upstream made every later request (any tenant's) wait out the timeouts ahead.
   * Retryable: the upstream never saw it, so a fallback upstream may take it.
   *
   * A lookup belongs to the pool (undici passes `connect.lookup` to net/tls.connect when it opens a
   * connection), so a checked lookup gets pools of its own: a pinned address one per address, a
   * public-only lookup one per resolver. None shares a connection with unchecked requests to the
   * same origin.
   */
  poolFor(origin: string, call: Pick<UpstreamRequest, 'pinnedAddress' | 'publicOnly'>): OriginPool {
    let key = origin;
    let lookup: (() => LookupFunction) | undefined;
    if (call.pinnedAddress) {
      const pinned = call.pinnedAddress;
      key = `${origin}#pinned:${pinned.address}`;
      lookup = () => pinnedLookup(pinned);
    } else if (call.publicOnly) {
      const resolve = call.publicOnly.resolve;
      key = `${origin}#public:${this.resolverId(resolve)}`;
      lookup = () => publicLookup(resolve);
    }
    let entry = this.pools.get(key);
    if (!entry) {
      if (this.pools.size >= MAX_POOLS) this.closeIdle();
      // the deadline of each call is deadline.ts's: no connect timeout of undici's own
      const connector = buildConnector({ timeout: 0, ...(lookup ? { lookup: lookup() } : {}) });
      const created: OriginPool = { pool: undefined as unknown as Pool, calls: 0 };
      created.pool = new Pool(origin, {
        connections: this.limits.sockets,
        // nor its header and body timers: the deadline and the stream's idle limit cover both
        headersTimeout: 0,
        bodyTimeout: 0,
        // undici 7 reconnects after a running request is aborted, for that aborted request (undici
        // bug 5845 in its tracker), and leaves the new connection open and idle: a silent upstream would keep one
        // socket per timeout. A connection no call waits for is refused instead (the client drops it).
        connect: (options, callback) => {
          if (created.calls === 0) callback(new Error('no call waits for this connection'), null);
          else connector(options, callback);
        },
      });
      entry = created;
      this.pools.set(key, entry);
    }
    const waiting = entry.calls - this.limits.sockets;
    if (waiting >= this.limits.queue) {
      throw new GatewayError({
        status: 503,
        code: ERROR_CODES.upstreamBusy,
        message: `The upstream is busy: all ${this.limits.sockets} connections to it are in use and ${waiting} requests are already waiting for one. Retry shortly.`,
        retryable: true,
        notStarted: true,
        retryAfterSeconds: 1,
      });
    }
    return entry;
  }

  /** Frees every pooled socket. */
  close(): void {
    for (const { pool } of this.pools.values()) pool.destroy().catch(() => {});
    this.pools.clear();
  }

  private closeIdle(): void {
    for (const [key, entry] of this.pools) {
      if (entry.calls > 0) continue;
      entry.pool.close().catch(() => {});
      this.pools.delete(key);
    }
  }

  private resolverId(resolve: Resolver | undefined): string {
    if (!resolve) return 'dns';
    let id = this.resolverIds.get(resolve);
    if (id === undefined) {
      id = this.nextResolverId++;
      this.resolverIds.set(resolve, id);
    }
    return String(id);
  }
}

export interface Target {
  origin: string;
  /** Path and query, as the request line carries them. */
  path: string;
  /** Basic credentials from the URL's userinfo (what node:http made of `auth`). */
  authorization?: string;
}

/** Targets kept at most before the cache is cleared. */
const MAX_TARGETS = 256;

export class RequestTargets {
  private readonly targets = new Map<string, Target>();

  /** The origin, path and userinfo credentials of `href`, parsed once while it stays cached. */
  of(href: string): Target {
    let target = this.targets.get(href);
    if (!target) {
      const url = new URL(href);
      const auth = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
      target = { origin: url.origin, path: `${url.pathname}${url.search}`, ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) };
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(href, target);
    }
    return target;
  }
}
