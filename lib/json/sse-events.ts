// Server-sent events read from an upstream's bytes as they arrive (the WHATWG event-stream format): lines
// split on \n, \r\n or \r, `event:` and `data:` fields, comments (`:`) skipped, an event ending at a blank
// line. Used where the gateway translates a stream rather than relaying it (Ark's image groups,
// upstreams §2.7). A line longer than `maxLine` is an error: an upstream cannot make the gateway buffer
// without bound.

import { StringDecoder } from 'node:string_decoder';

/** One event: its name (undefined without an `event:` field) and its data lines joined by \n. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

export class SseReader {
  private pending = '';
  private event: string | undefined;
  private data: string[] = [];
  // a UTF-8 character cut by a chunk edge waits for its other bytes
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly maxLine: number) {}

  /** The events completed by `chunk` (a chunk may end inside a line or an event: the rest waits). */
  take(chunk: Buffer | string): SseEvent[] {
    const text = this.pending + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    // a \r at the end may be half of a \r\n cut by the chunk edge: it waits with the last piece
    const held = text.endsWith('\r');
    const lines = (held ? text.slice(0, -1) : text).split(/\r\n|\r|\n/);
    // the last piece has no line end yet
    this.pending = (lines.pop() ?? '') + (held ? '\r' : '');
    if (this.pending.length > this.maxLine) throw new Error(`an event-stream line is longer than ${this.maxLine} characters`);
    const events: SseEvent[] = [];
    for (const line of lines) {
      if (line === '') {
        if (this.data.length > 0 || this.event !== undefined) events.push({ event: this.event, data: this.data.join('\n') });
        this.event = undefined;
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return events;
  }

  /** The event still open when the stream ended without its blank line, if any. */
  end(): SseEvent[] {
    const events = this.pending === '' ? [] : this.take('\n');
    if (this.data.length > 0) events.push({ event: this.event, data: this.data.join('\n') });
    this.data = [];
    this.event = undefined;
    return events;
  }
}
