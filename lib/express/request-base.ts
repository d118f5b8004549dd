// What a use case is handed from a request (docs/architecture.md "One use-case shape"): the caller, the
// host's request for the resolver, how to learn the client left, and the router's absolute base URL
// as the request reached it (scheme, Host, mount path), under which stores that serve their own
// objects (localResultStorage) sign result URLs.
import type { Request } from 'express';
import type { Cancellation, Usage, UseCaseRequest } from '../gateway/use-case.js';
import type { Caller } from '../types.js';
import { callerOf } from './authenticate.js';
import type { RequestContext } from './request-context.js';

// a Host header that is not a plain host[:port] is not echoed into a URL
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** `req.protocol` honours the host app's `trust proxy`. */
function requestBaseOf(req: Request): string {
  const host = req.get('host') ?? '';
  const safe = PLAIN_HOST.test(host) ? host : 'localhost';
  return `${req.protocol}://${safe}${req.baseUrl}`;
}

/**
 * What every use case is handed, read from the request's context when asked: most requests never
 * need the result base URL, so it is not built for them.
 */
export class UseCaseView implements UseCaseRequest {
  constructor(private readonly context: RequestContext) {}

  get caller(): Caller {
    return callerOf(this.context);
  }

  get hostRequest(): Request {
    return this.context.req;
  }

  get resultBase(): string {
    return requestBaseOf(this.context.req);
  }

  get cancel(): Cancellation {
    return this.context;
  }

  track(usage: Usage): void {
    // the request's usage from the start: a stream opened before the use case returns (a keep-alive)
    // carries its RateLimit headers, and the usage event of a client that left reads what was done
    this.context.recordUsage(usage);
    this.context.tracker?.(usage);
  }

  get requestId(): string {
    return this.context.requestId;
  }

  get dryRun(): boolean {
    return this.context.dryRun;
  }
}
