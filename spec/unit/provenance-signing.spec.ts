// The operator's signature (lib/provenance/cose-sign1.ts, image-signing.ts): the COSE_Sign1 fills the
// manifest's reserve exactly whatever its size; readySigning refuses what C2PA refuses (a self-signed or
// CA certificate) and what cannot sign (both or neither of privateKey and signer, an unknown algorithm);
// a `signer` callback that holds the key outside the gateway (as a KMS does) and an es384 key both
// produce files the reference reader validates and trusts by the right anchor.
import { constants, createPrivateKey, sign } from 'node:crypto';
import { decode } from 'cborg';
import { describe, expect, it } from 'vitest';
import type { ProvenanceSigning } from '../../lib/options/provenance-options.js';
import { certificatesOfPem, coseSign1, padsFor } from '../../lib/provenance/cose-sign1.js';
import { readySigning, signImage } from '../../lib/provenance/image-signing.js';
import { readProvenance } from '../../lib/provenance/read-provenance.js';
import { C2PA_ANCHORS, c2paFixture, c2paPem } from '../helpers/fake-c2pa-vendor.js';
import { seededRandom } from '../helpers/seeded-random.js';

const pem = c2paPem;
const ANCHORS = C2PA_ANCHORS;
const ES256 = { certificate: pem('es256-chain.pem'), privateKey: pem('es256-key.pem'), algorithm: 'es256' as const };
const SUBJECT = { provider: 'openai' as const, model: 'gpt-image-1', caller: { id: 'tenant-a' }, inputs: [] };

describe('COSE_Sign1 padding', () => {
  const parts = { algorithm: 'es256' as const, chain: certificatesOfPem(ES256.certificate), sign: () => Promise.resolve(new Uint8Array(64)) };
  // the unpadded size, as the refusal of a reserve too small names it
  const bareSize = (): Promise<number> =>
    coseSign1(new Uint8Array(32), parts, 0).then(
      () => 0,
      (error: Error) => Number(/takes (\d+) bytes/.exec(error.message)![1]),
    );

  it('fills every reserve from the bare signature to 70 000 bytes exactly, across the length-prefix steps', async () => {
    const bare = await bareSize();
    const random = seededRandom(384);
    const reserves = [bare, bare + 5, bare + 28, bare + 29, bare + 30, bare + 261, bare + 262, bare + 263, 65_540, 65_541, 65_542, 65_543, 65_544, 66_901, 66_902, 70_000];
    for (let extra = 5; extra < 300; extra += 1) reserves.push(bare + extra);
    for (let index = 0; index < 60; index += 1) reserves.push(bare + 5 + Math.floor(random() * 68_000));
    for (const reserve of reserves) {
      const out = await coseSign1(new Uint8Array(32), parts, reserve);
      expect(out.length, `reserve ${reserve}`).toBe(reserve);
      expect(out[0]).toBe(0xd2);
      const [, unprotected, payload, signature] = decode(out.subarray(1), { useMaps: true }) as [Uint8Array, Map<string, Uint8Array>, null, Uint8Array];
      expect(payload).toBeNull();
      expect(signature).toHaveLength(64);
      for (const [key, value] of unprotected) {
        expect(['pad', 'pad2']).toContain(key);
        expect(value.every((byte) => byte === 0)).toBe(true);
      }
    }
  });

  it('refuses a reserve under the bare signature, or 1 to 4 bytes over it (no padding entry is that small)', async () => {
    const bare = await bareSize();
    await expect(coseSign1(new Uint8Array(32), parts, bare - 1)).rejects.toThrow(/more than the/);
    for (const extra of [1, 2, 3, 4]) await expect(coseSign1(new Uint8Array(32), parts, bare + extra)).rejects.toThrow(/cannot be padded/);
    expect(padsFor(4)).toBeUndefined();
    expect(padsFor(5)).toEqual([0]);
    expect(padsFor(29)).toHaveLength(2);
  });
});

describe('readySigning refusals', () => {
  const chain = pem('es256-chain.pem').split('-----END CERTIFICATE-----');
  const intermediate = `${chain[1]!.trim()}\n-----END CERTIFICATE-----\n`;
  const rsaKey = pem('ps256-key.pem');
  it.each<[string, ProvenanceSigning, RegExp]>([
    ['a self-signed end-entity certificate', { ...ES256, certificate: pem('self-signed.pem') }, /self-signed/],
    ['a CA certificate (the chain’s intermediate)', { ...ES256, certificate: intermediate }, /CA certificate/],
    ['a root CA', { ...ES256, certificate: pem('es384-root.pem') }, /CA certificate/],
    ['both privateKey and signer', { ...ES256, signer: () => Promise.resolve(new Uint8Array(64)) }, /exactly one of privateKey and signer/],
    ['neither privateKey nor signer', { certificate: ES256.certificate, algorithm: 'es256' }, /exactly one of privateKey and signer/],
    ['an unknown algorithm', { ...ES256, algorithm: 'rs256' as 'es256' }, /algorithm must be/],
    ['a missing algorithm', { certificate: ES256.certificate, privateKey: rsaKey } as ProvenanceSigning, /algorithm must be/],
    ['a certificate that is not PEM', { ...ES256, certificate: 'not a certificate' }, /no PEM certificate/],
    ['a certificate that does not parse', { ...ES256, certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, /does not parse/],
  ])('refuses %s', (_name, signing, message) => {
    expect(() => readySigning(signing)).toThrow(message);
  });
});

describe('signatures the reference reader validates', () => {
  it('a ps256 `signer` callback holding the key outside the gateway (KMS style)', async () => {
    // the key lives in the "KMS": the gateway sees only the callback and the certificate
    const kms = createPrivateKey(pem('ps256-key.pem'));
    const seen: number[] = [];
    const signer = (bytes: Uint8Array): Promise<Uint8Array> => {
      seen.push(bytes.length);
      return Promise.resolve(new Uint8Array(sign('sha256', bytes, { key: kms, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })));
    };
    const ready = readySigning({ certificate: pem('ps256-chain.pem'), signer, algorithm: 'ps256' });
    const signed = await signImage(c2paFixture('no_manifest.jpg'), ready, SUBJECT);
    expect(signed).toBeDefined();
    expect(seen).toHaveLength(1);
    expect(await readProvenance(signed!, ANCHORS)).toMatchObject({ c2pa: 'valid', trusted: true, actions: ['c2pa.created'] });
  });

  it.each(['no_manifest.jpg', 'sample1.png', 'sample1.webp', 'C.jpg'])('es384 signs %s: trusted with its root among the anchors, untrusted without', async (name) => {
    const ready = readySigning({ certificate: pem('es384-signer.pem'), privateKey: pem('es384-key.pem'), algorithm: 'es384' });
    const signed = await signImage(c2paFixture(name), ready, SUBJECT);
    expect(signed).toBeDefined();
    // the reference reader calls a file Trusted when every manifest in it is: C.jpg's parent is the vendor's, under the test roots
    const report = await readProvenance(signed!, name === 'C.jpg' ? pem('es384-root.pem') + ANCHORS : pem('es384-root.pem'));
    expect(report).toMatchObject({ c2pa: 'valid', trusted: true, signer: 'Gateway Specs ES384' });
    expect(report.actions).toEqual(name === 'C.jpg' ? ['c2pa.opened'] : ['c2pa.created']);
    expect(await readProvenance(signed!, ANCHORS)).toMatchObject({ c2pa: 'valid', trusted: false });
  });

  it('a format the signer cannot embed into (GIF, MP4) is left as it is', async () => {
    const ready = readySigning(ES256);
    expect(await signImage(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), ready, SUBJECT)).toBeUndefined();
    expect(await signImage(c2paFixture('video1.mp4'), ready, SUBJECT)).toBeUndefined();
  });
});
