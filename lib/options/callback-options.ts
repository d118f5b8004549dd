// The `callbacks` option (docs/video-tasks-and-callbacks.md): how task states are delivered to a
// caller's callback URL, how often tasks are read at their upstream, and the scheduler that runs both.
// Types only; gateway/options/callback-options.ts reads them.
import type { JobScheduler } from '../stores/scheduling/job-scheduler.js';

/**
 * The polling schedule of each kind of task (`callbacks.pollIntervalsMs`): delays in ms between two reads
 * of the task at its upstream, in order, the last one repeating. A kind left out keeps its default.
 * @example pollIntervalsMs: { video: [60_000, 30_000, 15_000], image: [5_000] }
 */
export interface TaskPollIntervals {
  /**
   * Video tasks with a callback (video tasks without one are read only when queried). Default
   * `[60 s, 45 s, 30 s, 20 s, 15 s]`: the first read a minute after the create, then shortened gradually,
   * never below 15 s (contract §8: no needless high-frequency polling).
   * @example video: [30_000, 15_000]
   */
  video?: readonly number[];
  /**
   * Image work on the upstream's own task API (DashScope's asynchronous synthesis, fal's queue,
   * Replicate's predictions): an image task handed there, and an Idempotency-Key request whose
   * instance stopped. A vendor's image task ends in seconds, so it is read soon and often. Default
   * `[5 s]`.
   * @example image: [2_000, 5_000]
   */
  image?: readonly number[];
}

/**
 * Callback delivery for tasks (contract §6), the polling schedule of tasks and the scheduler that
 * runs both. Every key is optional.
 * @example callbacks: { signingSecret: 'whsec_…', maxAttempts: 8, pollIntervalsMs: { video: [60_000, 30_000, 15_000] } }
 */
export interface CallbackOptions {
  /**
   * Standard Webhooks secret (`whsec_…`): every delivery is signed. Default: unsigned; `undefined` is
   * the same, so a secret read from the environment is given as it is.
   * @example signingSecret: process.env.WEBHOOK_SECRET
   */
  signingSecret?: string | undefined;
  /** Attempts per task state before giving up. Default 8. @example maxAttempts: 12 */
  maxAttempts?: number;
  /**
   * Development and tests only: http and loopback/private callback targets (the other private-network
   * allowances are the `allow` option). Default false. @example allowLocal: process.env.NODE_ENV === 'test'
   */
  allowLocal?: boolean;
  /**
   * Runs the task polls and callback deliveries, and the lease watches of image tasks and of kept
   * work. Default: `bullmqScheduler` on the `redis` option when given (prefix `<redis.prefix>bull`),
   * else `memoryScheduler()`.
   * @example scheduler: bullmqScheduler({ connection: new Redis(process.env.REDIS_URL!), concurrency: 16 })
   */
  scheduler?: JobScheduler;
  /** Timeout of one delivery attempt, ms. Default 10 s. @example timeoutMs: 5_000 */
  timeoutMs?: number;
  /**
   * First retry delay, ms; doubled each retry, with jitter. Default 2 s. Used by callback deliveries
   * and by task polls that could not be made (store, resolver or Ark unavailable).
   * @example retryBaseMs: 5_000
   */
  retryBaseMs?: number;
  /** Longest retry delay, ms. Default 5 min. @example retryMaxMs: 600_000 */
  retryMaxMs?: number;
  /**
   * How often the gateway reads a task's upstream while it follows the task, per kind of task
   * (docs/configuration.md "callbacks"): each a list of delays in ms, the last one repeating. Every
   * kind has its default.
   * @example pollIntervalsMs: { video: [30_000, 15_000], image: [2_000] }
   */
  pollIntervalsMs?: TaskPollIntervals;
  /**
   * Stop following a task that has not ended after this long, ms. Default 48 h (Ark's default expiry).
   * Also bounds the retries of a poll that keeps failing: about `maxFollowMs / retryMaxMs` attempts
   * (at least `maxAttempts`), then following ends with an error in the log.
   * @example maxFollowMs: 24 * 3600_000
   */
  maxFollowMs?: number;
  /**
   * More callback hosts to refuse as temporary public proxies (contract §6.3), beside the built-in
   * `TEMPORARY_PROXY_HOSTS` (ngrok, Cloudflare quick tunnels, localtunnel, webhook.site, ...). Each
   * entry is a bare host name and covers its subdomains. Default `[]`.
   * @example blockedHosts: ['tunnels.example-vendor.net']
   */
  blockedHosts?: readonly string[];
  /**
   * Hosts (with their subdomains) exempt from the temporary-proxy list: for an operator whose own
   * receiver lives on such a service, e.g. a reserved ngrok domain. Default `[]`.
   * @example allowedHosts: ['acme.ngrok.app']
   */
  allowedHosts?: readonly string[];
}
