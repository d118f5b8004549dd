// An image Data URL as the JSON parser found it in the request body: a view of the body's own bytes
// (ASCII, already checked by checkImageDataUrlBytes), never a JS string. JSON.parse would hold the
// body Buffer and a string copy of each Data URL at once (2x the body, plus the heap's slack); a view
// holds nothing beyond the Buffer, and encodeJsonWithUploads sends it upstream slice by slice with no
// copy at all (docs/architecture.md "Performance": memory per request ≤ 2x the body).
// Produced only for the `image` values of POST /v1/images/generations (json-body.ts); anything
// that serializes the body (JSON.stringify, a host's logging) gets the Data URL string back. A value
// of the parsed JSON body, so it sits with the JSON helpers: the image rules (lib/images/) and the URL
// checks of forwarded bodies (lib/security/) both recognise it, neither owns it.

export class DataUrlText {
  constructor(
    /** The whole Data URL, header and base64, as ASCII bytes (a view into the request body). */
    readonly text: Buffer,
    /** The image type named in the header, lower-cased. */
    readonly mime: string,
    /** The decoded size in bytes (from the base64 length). */
    readonly bytes: number,
  ) {}

  /** The Data URL as a string: a copy, made only when something serializes the body. */
  toJSON(): string {
    return this.text.toString('latin1');
  }

  toString(): string {
    return this.toJSON();
  }
}
