// Writes a streamed image answer the gateway makes itself (docs/routes.md "Streamed images"): OpenAI's
// image events (`image_generation.*` / `image_edit.*`, upstreams §4.2), each image base64-encoded in
// slices as the socket takes it (no base64 string of a whole image is built), and an SSE comment
// (`: keep-alive`) every limits.streamKeepAliveMs while nothing else is written. The stream opens
// lazily, at its first keep-alive or event: work that fails before then is answered with its ordinary
// status and JSON error, work that fails after with one error event.
import { ClientGoneError } from '../../errors/client-gone-error.js';
import type { GatewayError } from '../../errors/gateway-error.js';
import type { ImageStreamEvent } from '../../gateway/image-pipeline/image-streams.js';
import { guardFlush, waitForDrain } from './client-stall.js';
import type { RequestContext } from '../request-context.js';
import { sendRateLimit } from './send-body.js';
import { errorEvent, keepAliveCadence, openEventStream } from './sse-relay.js';

// a multiple of 3, so each slice encodes to base64 without padding in the middle of the image
const SLICE = 3 * 64 * 1024;
const KEEP_ALIVE = ': keep-alive\n\n';

/** The event names' prefix: generations and edits name their events apart (upstreams §4.2). */
export type ImageEventPrefix = 'image_generation' | 'image_edit';

export class ImageEventWriter {
  private timer: NodeJS.Timeout | undefined;
  private writing = false;

  constructor(
    private readonly context: RequestContext,
    private readonly prefix: ImageEventPrefix,
    private readonly keepAliveMs: number,
  ) {}

  /** The response began: its status and headers are sent, errors are events from now on. */
  get opened(): boolean {
    return this.context.res.headersSent;
  }

  /** Starts the keep-alive comments (the first one opens the stream); stopped by stop(), or when the response closes. */
  start(): void {
    this.timer = setInterval(() => this.keepAlive(), keepAliveCadence(this.keepAliveMs));
    this.timer.unref();
    this.context.res.once('close', () => this.stop());
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Writes one event, waiting for a slow client (cut after limits.clientStallMs). */
  async write(event: ImageStreamEvent): Promise<void> {
    this.open();
    this.writing = true;
    try {
      const type = `${this.prefix}.${event.phase}`;
      await this.piece(`event: ${type}\ndata: {"type":"${type}","b64_json":"`);
      const { image } = event;
      for (let start = 0; start < image.length; start += SLICE) await this.piece(image.toString('base64', start, Math.min(start + SLICE, image.length)));
      // the fields after b64_json: one JSON object, its opening brace dropped
      await this.piece(`",${JSON.stringify(event.fields).slice(1)}\n\n`);
    } finally {
      this.writing = false;
    }
  }

  /** Ends a stream whose events are all written. */
  end(): void {
    this.stop();
    this.open();
    this.context.res.end();
    guardFlush(this.context);
  }

  /** Ends an opened stream with one error event carrying the error object. */
  fail(error: GatewayError): void {
    this.stop();
    const { res } = this.context;
    if (res.destroyed || res.writableEnded) return;
    res.end(errorEvent(error, 'image', 0));
    guardFlush(this.context);
  }

  private open(): void {
    if (this.opened) return;
    sendRateLimit(this.context);
    openEventStream(this.context, 200);
    this.context.res.flushHeaders();
  }

  private keepAlive(): void {
    const { res } = this.context;
    if (res.destroyed || res.writableEnded) return this.stop();
    // an event being written is itself what keeps the connection
    if (this.writing) return;
    this.open();
    res.write(KEEP_ALIVE);
  }

  private piece(chunk: string): Promise<void> | void {
    const { res } = this.context;
    if (res.destroyed) throw new ClientGoneError();
    if (res.write(chunk)) return;
    return waitForDrain(this.context);
  }
}
