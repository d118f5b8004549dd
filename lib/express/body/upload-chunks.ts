// multer storage for the multipart parser (multipart-body.ts): each file is kept as the chunks busboy
// hands over (views of the socket's reads), never concatenated. multer's memoryStorage copies every
// file into one Buffer while the chunks still hold the socket's reads, so each file is held twice
// until the garbage is collected: 2.6x the images at the peak (docs/architecture.md "Performance": ≤ 2x
// the body). The chunks are read in place: the type sniffed from the first bytes, the fingerprint
// hashed chunk by chunk, the upload encoded as base64 across chunk boundaries (uploaded-image.ts)
// or re-sent in a multipart form as views of the chunks (transport/form-body.ts).
import type { Request } from 'express';
import type { StorageEngine } from 'multer';

type UploadedFile = Express.Multer.File;

export function uploadChunksStorage(): StorageEngine {
  return {
    _handleFile(_req: Request, file: UploadedFile, callback: (error?: unknown, info?: Partial<UploadedFile> & { chunks: Buffer[] }) => void): void {
      const chunks: Buffer[] = [];
      let size = 0;
      file.stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
      });
      file.stream.once('end', () => callback(null, { size, chunks }));
      file.stream.once('error', (error: unknown) => callback(error));
    },
    _removeFile(_req: Request, file: UploadedFile, callback: (error: Error | null) => void): void {
      delete (file as { chunks?: Buffer[] }).chunks;
      callback(null);
    },
  };
}

/** A file's bytes as the chunks they came in (a file parsed by another multer: its one buffer). */
export function uploadedChunks(file: UploadedFile): readonly Buffer[] {
  const chunks = (file as { chunks?: Buffer[] }).chunks;
  return chunks ?? (file.buffer ? [file.buffer] : []);
}

/** The first `count` bytes of a file (fewer when it is shorter): a small copy, for sniffing its type. */
export function uploadedHead(file: UploadedFile, count: number): Buffer {
  const head: Buffer[] = [];
  let length = 0;
  for (const chunk of uploadedChunks(file)) {
    if (length >= count) break;
    const part = chunk.subarray(0, count - length);
    head.push(part);
    length += part.length;
  }
  return Buffer.concat(head, length);
}
