// The client went away (or stalled and was cut): nothing is answered and nothing is retried. A leaf,
// because the transport raises it and the inbound side (writes, the error middleware) sees it.

/** Raised when the caller disconnected: nothing is answered, nothing is retried. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientGoneError';
  }
}
