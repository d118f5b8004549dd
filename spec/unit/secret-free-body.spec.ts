// secretFreeBody (lib/transport/secret-free-body.ts): a relayed body with the credentials sent cut out,
// wherever the chunks split them, and nothing else changed or held back past the end.
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { secretFreeBody } from '../../lib/transport/secret-free-body.js';

const KEY = 'azure-resource-key-0123456789';

async function relayed(chunks: string[], secrets: Array<string | undefined> = [KEY]): Promise<string> {
  const out: Buffer[] = [];
  for await (const chunk of secretFreeBody(Readable.from(chunks.map((text) => Buffer.from(text))), secrets)) out.push(chunk as Buffer);
  return Buffer.concat(out).toString();
}

describe('secretFreeBody', () => {
  it.each<[string, string[], string]>([
    ['one chunk', [`data: {"message":"bad key ${KEY}"}\n\n`], 'data: {"message":"bad key [redacted]"}\n\n'],
    ['a key split across chunks', ['data: bad key azure-res', 'ource-key-0123', '456789 end\n\n'], 'data: bad key [redacted] end\n\n'],
    ['two keys, one at the very end', [`${KEY} and ${KEY.slice(0, 5)}`, `${KEY.slice(5)}`], '[redacted] and [redacted]'],
    ['a beginning of the key at the end of the stream is flushed', ['tail azure-r'], 'tail azure-r'],
    ['nothing to cut', ['event: image_generation.completed\n', 'data: {}\n\n'], 'event: image_generation.completed\ndata: {}\n\n'],
  ])('%s', async (_name, chunks, expected) => {
    expect(await relayed(chunks)).toBe(expected);
  });

  it('gives back the body itself when no secret is long enough to cut', () => {
    const body = new PassThrough();
    expect(secretFreeBody(body, [undefined, 'short'])).toBe(body);
  });

  it("passes the upstream body's error on as the same error", async () => {
    const body = new PassThrough();
    const wrapped = secretFreeBody(body, [KEY]);
    const failure = new Error('socket reset');
    const seen = new Promise<unknown>((resolve) => wrapped.once('error', resolve));
    wrapped.resume();
    body.destroy(failure);
    expect(await seen).toBe(failure);
  });

  it('destroying the relayed body destroys the upstream body (the call ends)', async () => {
    const body = new PassThrough();
    const wrapped = secretFreeBody(body, [KEY]);
    const closed = new Promise<void>((resolve) => body.once('close', resolve));
    wrapped.destroy();
    await closed;
    expect(body.destroyed).toBe(true);
  });
});
