// A result host for durable-results specs: serves named bodies (images, videos, lies) from 127.0.0.1,
// each link dying after its first download, as vendors' signed result URLs die after a day.
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

export interface FakeMediaHost extends FakeUpstream {
  /** Publishes `body` and answers a URL that dies after `downloadsPerLink` downloads. */
  publish(name: string, body: Buffer, contentType?: string): string;
  /** How many downloads a link published from now on survives. Default 1. */
  downloadsPerLink: number;
}

/** An MP4 header (ftyp isom) followed by `size` bytes of filler: enough for the gateway's sniffer. */
export function fakeMp4(size: number): Buffer {
  const video = Buffer.alloc(size, 7);
  Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0]).copy(video);
  return video;
}

export async function startFakeMediaHost(): Promise<FakeMediaHost> {
  const files = new Map<string, { body: Buffer; contentType: string; left: number }>();
  const fake = await startFakeUpstream((request, res) => {
    const file = files.get(request.path);
    // the link expires after its last allowed download
    if (file && --file.left <= 0) files.delete(request.path);
    if (!file) {
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      return;
    }
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.body.length });
    res.end(file.body);
  });
  let sequence = 0;
  const host = Object.assign(fake, {
    downloadsPerLink: 1,
    publish(name: string, body: Buffer, contentType = 'application/octet-stream') {
      const path = `/media/${++sequence}-${name}?Expires=1781778573&Signature=abc`;
      files.set(path, { body, contentType, left: host.downloadsPerLink });
      return `${fake.origin}${path}`;
    },
  });
  return host;
}
