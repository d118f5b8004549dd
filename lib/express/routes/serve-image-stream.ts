// Answers a streamed image request (`stream: true`, docs/routes.md "Streamed images") the image pipeline
// served (gateway/image-pipeline.ts): an upstream's own OpenAI image events relayed (sse-relay.ts), or
// the events the gateway makes (image-event-writer.ts), with keep-alive comments while the image is
// made. A failure before the stream opened is the ordinary error status and JSON body; after, one
// error event and the end. The request's one usage event goes out when the response closes, with the
// images delivered.
import { ClientGoneError } from '../../errors/client-gone-error.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { type ImageCall, runImageRequest } from '../../gateway/image-pipeline/image-pipeline.js';
import type { GatewayDeps } from '../../gateway/gateway-deps.js';
import type { ImageStreamAsk } from '../../images/image-stream-ask.js';
import { ImageEventWriter } from '../answers/image-event-writer.js';
import type { ImageStreamEvent } from '../../gateway/image-pipeline/image-streams.js';
import { UseCaseView } from '../request-base.js';
import type { RequestContext } from '../request-context.js';
import { relaySse } from '../answers/sse-relay.js';

export async function serveImageStream(deps: GatewayDeps, context: RequestContext, call: Omit<ImageCall, 'keepsLateWork' | 'stream'>, ask: ImageStreamAsk): Promise<void> {
  const keepAliveMs = deps.options.limits.streamKeepAliveMs;
  context.streaming = true;
  const writer = new ImageEventWriter(context, call.route === 'images.edits' ? 'image_edit' : 'image_generation', keepAliveMs);
  writer.start();
  try {
    // a stream cannot be replayed: no late work is kept for it (kept-work.ts)
    const outcome = await runImageRequest(deps, new UseCaseView(context), { ...call, stream: ask });
    context.recordUsage(outcome.usage);
    if (!outcome.ok) throw outcome.error;
    const { answer } = outcome;
    if (answer.kind === 'relay') {
      writer.stop();
      const { relayed } = answer;
      // the usage event waits for the stream's books (image-streams.ts): a client that cuts it closes the response first
      context.awaitBooks(relayed.settled);
      // an upstream stream that ends without a completed image answered nothing: the caller is told so
      const endedWith = (): GatewayError | undefined =>
        outcome.usage.images === 0 ? GatewayError.noImage(outcome.usage.provider ?? 'upstream', ' (the stream ended without one)', outcome.usage.upstreamRequestId) : undefined;
      const failure = await relaySse(context, relayed.stream, 'image', (error) => (context.errorCode = error.code), relayed.observe, { keepAliveMs, endedWith });
      await relayed.settled;
      // already told to the client as an error event; thrown so the error middleware logs it once
      if (failure) throw failure;
      return;
    }
    if (answer.kind !== 'events') throw GatewayError.internal();
    const written = writeEvents(writer, answer.events);
    // the generator settles the stream's charge when it stops (image-streams.ts): the usage event waits for it
    context.awaitBooks(written);
    await written;
    writer.end();
  } catch (error) {
    writer.stop();
    if (!(error instanceof ClientGoneError) && writer.opened && !context.res.writableEnded) {
      const told = GatewayError.is(error) ? error : GatewayError.internal();
      // before the end: the usage event goes out on 'close' and must carry the code
      context.errorCode = told.code;
      writer.fail(told);
    }
    throw error;
  }
}

/** Writes each event as it comes; the generator's own end (its books settled) is this promise's. */
async function writeEvents(writer: ImageEventWriter, events: AsyncGenerator<ImageStreamEvent>): Promise<void> {
  for await (const event of events) await writer.write(event);
}
