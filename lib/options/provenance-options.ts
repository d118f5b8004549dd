// The `provenance` option (docs/provenance.md): C2PA Content Credentials read, checked and reported for
// every image and video the gateway answers, and, for the callers the operator chooses, signed with
// the operator's certificate. Off without the option: images pass byte for byte and unread.
import type { KeyObject } from 'node:crypto';
import type { Caller, ProviderName } from '../types.js';

/** The signing algorithms: RSA-PSS with SHA-256 (32-byte salt) and ECDSA P-256 / P-384. */
export type ProvenanceAlgorithm = 'ps256' | 'es256' | 'es384';

/** What one image is, for an operator's own assertions: never the prompt or the tenant unless the hook adds them. */
export interface ProvenanceSubject {
  readonly provider: ProviderName | undefined;
  readonly model: string;
  readonly caller: Caller;
}

/** One assertion the operator adds to its manifest (a C2PA assertion label and its JSON data). */
export interface ProvenanceAssertion {
  readonly label: string;
  readonly data: unknown;
}

/**
 * The operator's signature (docs/provenance.md "Signing"). C2PA refuses self-signed signing
 * certificates: `certificate` is an end-entity certificate issued by a CA (the trust anchor readers
 * are given), with `digitalSignature` and an extended key usage C2PA accepts.
 * @example sign: { certificate: readFileSync('signer-chain.pem', 'utf8'), privateKey: readFileSync('signer.key', 'utf8'), algorithm: 'es256' }
 */
export interface ProvenanceSigning {
  /** The signing certificate's PEM, optionally followed by its chain (not the root). */
  certificate: string;
  /** The private key (PEM or a KeyObject); or give `signer` instead, so the key need never be in the process. */
  privateKey?: string | KeyObject;
  /** Resolves to the raw signature of `bytes`: RSA-PSS SHA-256 with a 32-byte salt for `ps256`, r||s for `es256`/`es384` (a KMS or HSM). */
  signer?: (bytes: Uint8Array) => Promise<Uint8Array>;
  algorithm: ProvenanceAlgorithm;
  /** Resolves to an RFC 3161 time-stamp token over `bytes`, so a signature stays valid after its certificate expires. */
  timestamper?: (bytes: Uint8Array) => Promise<Uint8Array>;
  /** Assertions to add to each manifest the gateway signs (nothing about the request is added otherwise). */
  assertions?: (subject: ProvenanceSubject) => readonly ProvenanceAssertion[];
}

/**
 * Reading, reporting and signing for one caller. `{}` reads and reports; `trustAnchors` (PEM) says
 * which signers are `trusted`; `sign` signs.
 * @example provenance: { trustAnchors: readFileSync('c2pa-anchors.pem', 'utf8') }
 */
export interface ProvenanceOptions {
  /** PEM certificates of the CAs whose signatures are reported `trusted: true`; none: no trust check. */
  trustAnchors?: string;
  /** Sign every image for the callers whose options have it. */
  sign?: ProvenanceSigning;
}

/** The option: the same for every caller, or chosen per caller (`null`: no report and no signature for that caller). */
export type ProvenanceSetting = ProvenanceOptions | ((caller: Caller) => ProvenanceOptions | null | Promise<ProvenanceOptions | null>);

export type { ProvenanceReport } from '../types.js';
