// encodeFormBody (lib/transport/form-body.ts): the multipart body re-sent to OpenAI-compatible
// upstreams is byte for byte what a web FormData encodes for the same fields and files (boundary
// aside), its declared length is its real length, and it can be opened again for another attempt.
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { type FormPart, encodeFormBody } from '../../lib/transport/form-body.js';

/** What FormData writes for the parts, its boundary replaced by `boundary`. */
async function formDataBytes(parts: readonly FormPart[], boundary: string): Promise<Buffer> {
  const data = new FormData();
  for (const part of parts) {
    if ('value' in part) data.append(part.name, part.value);
    else data.append(part.name, new Blob([...part.chunks], { type: part.type }), part.fileName);
  }
  const response = new Response(data);
  const theirs = /boundary=(.+)$/.exec(response.headers.get('content-type')!)![1]!;
  return Buffer.from(
    Buffer.from(await response.arrayBuffer())
      .toString('latin1')
      .split(theirs)
      .join(boundary),
    'latin1',
  );
}

const bytes = (length: number, seed: number): Buffer => Buffer.from(Array.from({ length }, (_, index) => (index * 31 + seed) % 256));

const cases: Array<[string, FormPart[]]> = [
  [
    'text fields only',
    [
      { name: 'model', value: 'gpt-image-1' },
      { name: 'prompt', value: 'a cat' },
    ],
  ],
  [
    'a file in one chunk',
    [
      { name: 'prompt', value: 'p' },
      { name: 'image', fileName: 'a.png', type: 'image/png', chunks: [bytes(1000, 1)] },
    ],
  ],
  ['a file in many chunks, an empty chunk among them', [{ name: 'image[]', fileName: 'b.png', type: 'image/png', chunks: [bytes(65_536, 2), Buffer.alloc(0), bytes(10, 3), bytes(70_001, 4)] }]],
  [
    'repeated names keep their order',
    [
      { name: 'tag', value: 'a' },
      { name: 'tag', value: 'b' },
      { name: 'image[]', fileName: '1.png', type: 'image/png', chunks: [bytes(5, 5)] },
      { name: 'image[]', fileName: '2.png', type: 'image/png', chunks: [bytes(6, 6)] },
    ],
  ],
  [
    'quotes and line breaks in names are escaped',
    [
      { name: 'we"ird\nname', value: 'v' },
      { name: 'image', fileName: 'my "best"\r\n.png', type: 'image/png', chunks: [bytes(3, 7)] },
    ],
  ],
  ['line breaks in values become CRLF', [{ name: 'prompt', value: 'one\ntwo\rthree\r\nfour' }]],
  [
    'unicode in values and file names',
    [
      { name: 'prompt', value: '夜のカワウソ 🦦' },
      { name: 'image', fileName: 'カワウソ.png', type: 'image/png', chunks: [bytes(4, 8)] },
    ],
  ],
];

describe('encodeFormBody', () => {
  it.each(cases)('%s: the bytes FormData writes, and the declared length', async (_name, parts) => {
    const form = encodeFormBody(parts);
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(form.contentType)![1]!;
    const sent = await buffer(form.open());
    expect(sent.length).toBe(form.length);
    expect(sent.equals(await formDataBytes(parts, boundary))).toBe(true);
  });

  it('opens again from the start (another attempt sends the same bytes)', async () => {
    const form = encodeFormBody(cases[2]![1]);
    const first = await buffer(form.open());
    const second = await buffer(form.open());
    expect(second.equals(first)).toBe(true);
  });

  it('sends the file chunks themselves, not copies of them', async () => {
    const chunk = bytes(100_000, 9);
    const form = encodeFormBody([{ name: 'image', fileName: 'a.png', type: 'image/png', chunks: [chunk] }]);
    const pieces: Buffer[] = [];
    for await (const piece of form.open()) pieces.push(piece as Buffer);
    expect(pieces.some((piece) => piece.buffer === chunk.buffer && piece.byteOffset === chunk.byteOffset)).toBe(true);
  });

  it('a part type with a line break in it is sent as application/octet-stream', async () => {
    const form = encodeFormBody([{ name: 'image', fileName: 'a.png', type: 'image/png\r\nX-Evil: 1', chunks: [bytes(3, 1)] }]);
    const text = (await buffer(form.open())).toString('latin1');
    expect(text).toContain('Content-Type: application/octet-stream\r\n');
    expect(text).not.toContain('X-Evil');
  });
});
