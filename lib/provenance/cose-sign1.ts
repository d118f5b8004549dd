// The claim signature of a C2PA manifest (docs/provenance.md "Signing"): a COSE_Sign1 (RFC 9052) with a
// detached payload, the algorithm and the certificate chain (`x5chain`) in the protected header, an
// optional RFC 3161 time-stamp token in `sigTst2`, and zero padding up to the size the manifest
// reserved for it. The reference implementation's builder asks its signer for these bytes whole, which
// is what lets the key stay in a KMS or HSM: only `sign(toBeSigned)` touches it.
import { X509Certificate } from 'node:crypto';
import type { ProvenanceAlgorithm } from '../options/provenance-options.js';

// cborg is an optional peer and an ECMAScript module only: import() when signing, so the CommonJS build
// loads without it (a static import would be a require() there, which its package refuses)
let cbor: Promise<typeof import('cborg')> | undefined;

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
  cbor ??= import('cborg').catch((error: unknown) => {
    cbor = undefined;
    throw error;
  });
  const { encode } = await cbor;
  const chain = parts.chain.length === 1 ? parts.chain[0]! : [...parts.chain];
  const protectedBytes = encode(
    new Map<number, unknown>([
      [ALG, COSE_ALGORITHM[parts.algorithm]],
      [X5CHAIN, chain],
    ]),
  );
  const empty = new Uint8Array(0);
  const signature = await parts.sign(encode(['Signature1', protectedBytes, empty, claim]));
  // the time stamp countersigns the signature (C2PA 2.x `sigTst2`): its message is the COSE
  // countersignature structure over the signature as a CBOR byte string, under the same protected header
  const token = parts.timestamper ? await parts.timestamper(encode(['CounterSignature', protectedBytes, empty, encode(signature)])) : undefined;
  const build = (pads: readonly number[]): Uint8Array => {
    const unprotected = new Map<string, unknown>();
    if (token) unprotected.set('sigTst2', { tstTokens: [{ val: token }] });
    pads.forEach((size, index) => unprotected.set(PAD_KEYS[index]!, new Uint8Array(size)));
    const body = encode([protectedBytes, unprotected, null, signature]);
    const tagged = new Uint8Array(body.length + 1);
    tagged[0] = 0xd2; // CBOR tag 18: COSE_Sign1
    tagged.set(body, 1);
    return tagged;
  };
  const bare = build([]);
  if (bare.length > reserve) throw new Error(`the signature takes ${bare.length} bytes, more than the ${reserve} reserved`);
  if (bare.length === reserve) return bare;
  const pads = padsFor(reserve - bare.length);
  const out = pads ? build(pads) : undefined;
  if (!out || out.length !== reserve) throw new Error(`the signature of ${bare.length} bytes cannot be padded to the ${reserve} reserved`);
  return out;
}

// the unprotected header's padding entries (C2PA: `pad`, and `pad2` where one cannot reach the size)
const PAD_KEYS = ['pad', 'pad2'] as const;

/** The CBOR size of a byte string of `size` bytes, its length prefix included. */
function byteStringSize(size: number): number {
  return size + (size < 24 ? 1 : size < 256 ? 2 : size < 65_536 ? 3 : 5);
}

/** The size of the map entry `key: bytes(size)`. */
function entrySize(key: string, size: number): number {
  return 1 + key.length + byteStringSize(size);
}

/** The padding sizes whose entries add exactly `extra` bytes: one `pad`, else `pad` and `pad2`; undefined under 5 bytes. */
export function padsFor(extra: number): number[] | undefined {
  const single = (room: number): number | undefined => {
    for (const header of [1, 2, 3, 5]) {
      const size = room - 1 - PAD_KEYS[0].length - header;
      if (size >= 0 && entrySize(PAD_KEYS[0], size) === room) return size;
    }
    return undefined;
  };
  const one = single(extra);
  if (one !== undefined) return [one];
  // a length prefix grows by a step the single entry cannot reach: a small second entry takes the step
  for (let second = 0; second < 24; second += 1) {
    const first = single(extra - entrySize(PAD_KEYS[1], second));
    if (first !== undefined) return [first, second];
  }
  return undefined;
}
