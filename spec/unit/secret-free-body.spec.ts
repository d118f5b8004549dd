// secretCut and secretFreeChunks (lib/transport/secret-free-body.ts): a relayed body with the
// credentials sent cut out, wherever the chunks split them, and nothing else changed or held back
// past the end.
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { secretCut, secretFreeChunks } from '../../lib/transport/secret-free-body.js';

const KEY = 'azure-resource-key-0123456789';

async function relayed(chunks: string[], secrets: Array<string | undefined> = [KEY]): Promise<string> {
  const out: Buffer[] = [];
  for await (const chunk of secretFreeChunks(Readable.from(chunks.map((text) => Buffer.from(text))), secretCut(secrets))) out.push(chunk);
  return Buffer.concat(out).toString();
}

describe('secretCut', () => {
  it.each<[string, string[], string]>([
    ['one chunk', [`data: {"message":"bad key ${KEY}"}\n\n`], 'data: {"message":"bad key [redacted]"}\n\n'],
    ['a key split across chunks', ['data: bad key azure-res', 'ource-key-0123', '456789 end\n\n'], 'data: bad key [redacted] end\n\n'],
    ['two keys, one at the very end', [`${KEY} and ${KEY.slice(0, 5)}`, `${KEY.slice(5)}`], '[redacted] and [redacted]'],
    ['a beginning of the key at the end of the stream is flushed', ['tail azure-r'], 'tail azure-r'],
    ['nothing to cut', ['event: image_generation.completed\n', 'data: {}\n\n'], 'event: image_generation.completed\ndata: {}\n\n'],
  ])('%s', async (_name, chunks, expected) => {
    expect(await relayed(chunks)).toBe(expected);
  });

  it('is undefined when no secret is long enough to cut (the body goes as it is)', () => {
    expect(secretCut([undefined, 'short'])).toBeUndefined();
  });

  it('holds back only an end that may begin a secret, and gives it back at the end', () => {
    const cut = secretCut([KEY])!;
    expect(cut.take(Buffer.from('data: {}\n\n')).toString()).toBe('data: {}\n\n');
    expect(cut.take(Buffer.from('data: azure-res')).toString()).toBe('data: ');
    expect(cut.end()?.toString()).toBe('azure-res');
    expect(cut.end()).toBeUndefined();
  });

  it("passes the upstream body's error on as the same error", async () => {
    const body = new PassThrough();
    const failure = new Error('socket reset');
    const read = (async () => {
      for await (const chunk of secretFreeChunks(body, secretCut([KEY]))) void chunk;
    })();
    body.write('data: {}\n\n');
    body.destroy(failure);
    await expect(read).rejects.toBe(failure);
  });
});
