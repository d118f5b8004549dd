// The claim signature of a C2PA manifest (docs/provenance.md "Signing"): a COSE_Sign1 (RFC 9052) with a
// detached payload, the algorithm and the certificate chain (`x5chain`) in the protected header, an
// optional RFC 3161 time-stamp token in `sigTst2`, and zero padding up to the size the manifest
// reserved for it. The reference implementation's builder asks its signer for these bytes whole, which
// is what lets the key stay in a KMS or HSM: only `sign(toBeSigned)` touches it.
import { X509Certificate } from 'node:crypto';
import { encode } from 'cborg';
import type { ProvenanceAlgorithm } from '../options/provenance-options.js';

// COSE algorithm identifiers (IANA "COSE Algorithms")
const COSE_ALGORITHM: Record<ProvenanceAlgorithm, number> = { es256: -7, es384: -35, ps256: -37 };
const X5CHAIN = 33;
const ALG = 1;

/** What the COSE signature is made from. */
export interface CoseSignerParts {
  readonly algorithm: ProvenanceAlgorithm;
  /** DER certificates, the end-entity's first. */
  readonly chain: readonly Uint8Array[];
  /** The raw signature of the bytes (r||s for ECDSA). */
  readonly sign: (toBeSigned: Uint8Array) => Promise<Uint8Array>;
  /** An RFC 3161 time-stamp token over the bytes, when the operator has a time-stamp authority. */
  readonly timestamper?: (message: Uint8Array) => Promise<Uint8Array>;
}

/** The DER certificates of a PEM text, in the order given. */
export function certificatesOfPem(pem: string): Uint8Array[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new Uint8Array(new X509Certificate(block).raw));
}

/** The bytes to reserve in the manifest for the signature: the chain, the signature, a time stamp's room. */
export function reserveSizeOf(parts: CoseSignerParts): number {
  const chain = parts.chain.reduce((total, der) => total + der.length + 8, 0);
  return chain + 1024 + (parts.timestamper ? 8192 : 0);
}

/** The tagged COSE_Sign1 of `claim`, padded to exactly `reserve` bytes when it is shorter. */
export async function coseSign1(claim: Uint8Array, parts: CoseSignerParts, reserve: number): Promise<Uint8Array> {
  const chain = parts.chain.length === 1 ? parts.chain[0]! : [...parts.chain];
  const protectedBytes = encode(
    new Map<number, unknown>([
      [ALG, COSE_ALGORITHM[parts.algorithm]],
      [X5CHAIN, chain],
    ]),
  );
  const empty = new Uint8Array(0);
  const signature = await parts.sign(encode(['Signature1', protectedBytes, empty, claim]));
  // the time stamp countersigns the claim under the same protected header (C2PA 2.x `sigTst2`)
  const token = parts.timestamper ? await parts.timestamper(encode(['CounterSignature', protectedBytes, empty, claim])) : undefined;
  const build = (pad: number | undefined): Uint8Array => {
    const unprotected = new Map<string, unknown>();
    if (token) unprotected.set('sigTst2', { tstTokens: [{ val: token }] });
    if (pad !== undefined) unprotected.set('pad', new Uint8Array(pad));
    const body = encode([protectedBytes, unprotected, null, signature]);
    const tagged = new Uint8Array(body.length + 1);
    tagged[0] = 0xd2; // CBOR tag 18: COSE_Sign1
    tagged.set(body, 1);
    return tagged;
  };
  let out = build(undefined);
  if (out.length > reserve) throw new Error(`the signature takes ${out.length} bytes, more than the ${reserve} reserved`);
  // a byte string's length prefix grows in steps, so the padding is settled in a few tries
  let pad = Math.max(0, reserve - out.length - 8);
  for (let tries = 0; tries < 8 && out.length !== reserve; tries += 1) {
    out = build(pad);
    pad += reserve - out.length;
    if (pad < 0) break;
  }
  return out;
}
