// encodeJsonWithUploads: uploads kept as the chunks they arrived in, and Data URLs kept as views of
// the request body (DataUrlText), sent as the exact JSON JSON.stringify would write, with its length;
// and the multer storage that keeps those chunks without copying them.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { DataUrlText } from '../../lib/json/data-url-text.js';
import { UploadedImage, encodeJsonWithUploads } from '../../lib/images/uploaded-image.js';
import { uploadChunksStorage, uploadedChunks, uploadedHead } from '../../lib/express/body/upload-chunks.js';

async function sent(value: unknown): Promise<{ text: string; length: number }> {
  const encoded = encodeJsonWithUploads(value);
  if (typeof encoded.body === 'string') return { text: encoded.body, length: encoded.length };
  const parts: Buffer[] = [];
  for await (const part of encoded.body) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(String(part)));
  return { text: Buffer.concat(parts).toString(), length: encoded.length };
}

/** `bytes` cut into chunks of the given sizes (cycled), as a socket's reads would cut an upload. */
function chunked(bytes: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, index = 0; at < bytes.length; index += 1) {
    const size = sizes[index % sizes.length]!;
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

describe('encodeJsonWithUploads', () => {
  it.each([
    ['one chunk', [1_000_000]],
    ['chunks of 1, 2 and 4 bytes (groups of 3 split every way)', [1, 2, 4]],
    ['socket-sized reads that are not multiples of 3', [65_536, 65_537, 7]],
    ['an empty chunk among them', [5, 0, 11]],
  ])('an upload in %s is the Data URL of its bytes', async (_name, sizes) => {
    for (const length of [0, 1, 2, 3, 4, 200_003]) {
      const bytes = randomBytes(length);
      const image = new UploadedImage('image/png', sizes.includes(0) && length > 0 ? [bytes.subarray(0, 1), Buffer.alloc(0), bytes.subarray(1)] : chunked(bytes, sizes), length);
      const expected = JSON.stringify({ content: [{ image: `data:image/png;base64,${bytes.toString('base64')}` }, { text: 'é' }] });
      const { text, length: declared } = await sent({ content: [{ image }, { text: 'é' }] });
      expect(text).toBe(expected);
      expect(declared).toBe(Buffer.byteLength(expected));
    }
  });

  it('a DataUrlText is sent as the Data URL it views, never through its toJSON', async () => {
    const url = `data:image/png;base64,${randomBytes(300_000).toString('base64')}`;
    const view = new DataUrlText(Buffer.from(url, 'latin1'), 'image/png', 300_000);
    let copies = 0;
    view.toJSON = () => {
      copies += 1;
      return url;
    };
    const { text, length } = await sent({ input: { content: [{ image: view }, { text: 'x' }] }, parameters: { image: view } });
    expect(text).toBe(JSON.stringify({ input: { content: [{ image: url }, { text: 'x' }] }, parameters: { image: url } }));
    expect(length).toBe(text.length);
    expect(copies).toBe(0);
  });
});

describe('uploadChunksStorage', () => {
  it('keeps the chunks a file arrived in, the same Buffers, with their total size', async () => {
    const chunks = [randomBytes(5), randomBytes(65_536), randomBytes(1)];
    const file = { stream: Readable.from(chunks) } as unknown as Express.Multer.File;
    const info = await new Promise<unknown>((resolve, reject) => {
      uploadChunksStorage()._handleFile({} as Request, file, (error, result) => (error ? reject(error as Error) : resolve(result)));
    });
    expect(info).toEqual({ size: 65_542, chunks });
    // no copy: what busboy handed over is what is kept
    expect((info as { chunks: Buffer[] }).chunks.every((chunk, index) => chunk === chunks[index])).toBe(true);
    const kept = { ...file, ...(info as object) };
    expect(uploadedHead(kept, 8)).toEqual(Buffer.concat(chunks).subarray(0, 8));
    expect(Buffer.concat(uploadedChunks(kept))).toEqual(Buffer.concat(chunks));
  });
});
