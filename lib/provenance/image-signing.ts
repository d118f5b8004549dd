// The operator's manifest on an image (docs/provenance.md "Signing"): built and embedded by the
// reference implementation, signed by the operator's key or signer through cose-sign1.ts. An image
// without a manifest gets a `c2pa.created` action with the trained-algorithmic-media source type; an
// image the vendor signed gets the vendor's manifest as its parent ingredient (`c2pa.opened`), so the
// vendor's claim stays verifiable; an edit's input images that carry manifests become component
// ingredients, and the edit's source type is the composite one. Nothing about the request is added
// but what the operator's `assertions` hook adds.
import { createPrivateKey, sign as signWith, constants, type KeyObject, X509Certificate } from 'node:crypto';
import type { ProvenanceAlgorithm, ProvenanceSigning, ProvenanceSubject } from '../options/provenance-options.js';
import { BytesBlob, c2paEngine } from './c2pa-engine.js';
import { type CoseSignerParts, certificatesOfPem, coseSign1, reserveSizeOf } from './cose-sign1.js';
import { hasManifestStore, provenanceFormatOf } from './manifest-boxes.js';

const TRAINED = 'http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia';
const COMPOSITE = 'http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia';
// the formats the gateway signs (docs/provenance.md); others are delivered as the vendor sent them
const SIGNABLE = new Set(['image/jpeg', 'image/png', 'image/webp']);
const GATEWAY = { name: 'express-image-gateway', version: '0.1.0' };

/** A signing configuration checked once: the chain read, the key loaded or the signer kept. */
export interface ReadySigning {
  readonly parts: CoseSignerParts;
  readonly assertions: ProvenanceSigning['assertions'];
}

/** Checks the operator's signing options; throws a sentence saying what is wrong. */
export function readySigning(signing: ProvenanceSigning): ReadySigning {
  const { algorithm } = signing;
  if (algorithm !== 'ps256' && algorithm !== 'es256' && algorithm !== 'es384') throw new TypeError(`provenance.sign.algorithm must be 'ps256', 'es256' or 'es384', not ${JSON.stringify(algorithm)}`);
  if (typeof signing.certificate !== 'string') throw new TypeError('provenance.sign.certificate must be the PEM text of the signing certificate (and its chain)');
  let chain: Uint8Array[];
  try {
    chain = certificatesOfPem(signing.certificate);
  } catch {
    throw new TypeError('provenance.sign.certificate holds a certificate that does not parse');
  }
  if (chain.length === 0) throw new TypeError('provenance.sign.certificate holds no PEM certificate');
  const leaf = new X509Certificate(Buffer.from(chain[0]!));
  if (leaf.ca) throw new TypeError('provenance.sign.certificate is a CA certificate: C2PA signs with an end-entity certificate issued by a CA');
  if (leaf.subject === leaf.issuer && leaf.verify(leaf.publicKey))
    throw new TypeError('provenance.sign.certificate is self-signed, which C2PA refuses: issue it from a CA of your own and give readers that CA as the trust anchor');
  if ((signing.privateKey === undefined) === (signing.signer === undefined)) throw new TypeError('provenance.sign needs exactly one of privateKey and signer');
  const sign = signing.signer ?? keySigner(signing.privateKey!, algorithm);
  return { parts: { algorithm, chain, sign, ...(signing.timestamper ? { timestamper: signing.timestamper } : {}) }, assertions: signing.assertions };
}

function keySigner(privateKey: string | KeyObject, algorithm: ProvenanceAlgorithm): (bytes: Uint8Array) => Promise<Uint8Array> {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const hash = algorithm === 'es384' ? 'sha384' : 'sha256';
  const options = algorithm === 'ps256' ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : { key, dsaEncoding: 'ieee-p1363' as const };
  return (bytes) => Promise.resolve(new Uint8Array(signWith(hash, bytes, options)));
}

/** An edit's input image, an ingredient of its output when it carries a manifest. */
export interface InputImage {
  readonly bytes: Uint8Array;
  readonly title: string;
}

/** What an image is signed as. */
export interface SigningSubject extends ProvenanceSubject {
  /** The edit's input images (none for a generation). */
  readonly inputs: readonly InputImage[];
}

/** The image signed with the operator's manifest, or undefined for a format the signer cannot embed into. */
export async function signImage(bytes: Uint8Array, signing: ReadySigning, subject: SigningSubject): Promise<Uint8Array | undefined> {
  const format = provenanceFormatOf(bytes);
  if (!format || !SIGNABLE.has(format)) return undefined;
  const engine = await c2paEngine();
  // a claim names one generator (C2PA 2.x): the gateway, with the upstream model that made the image
  const generator = [{ ...GATEWAY, upstream_model: subject.provider ? `${subject.provider}/${subject.model}` : subject.model }];
  const settings = JSON.stringify({ verify: { verify_after_sign: false, verify_trust: false, remote_manifest_fetch: false, ocsp_fetch: false } });
  const builder = engine.WasmBuilder.fromJson(JSON.stringify({ claim_generator_info: generator }), settings);
  try {
    const components = subject.inputs.filter((input) => {
      const inputFormat = provenanceFormatOf(input.bytes);
      return inputFormat !== undefined && hasManifestStore(input.bytes, inputFormat);
    });
    const sourceType = subject.inputs.length > 0 ? COMPOSITE : TRAINED;
    // the actions are written out rather than left to the builder's intents, so that each ingredient is
    // named by the action the specification asks for: the vendor's manifest is the parent (`c2pa.opened`),
    // else the image was created by the model; an edit's signed inputs were placed into it (`c2pa.placed`)
    if (hasManifestStore(bytes, format)) {
      await builder.addIngredientFromBlob(JSON.stringify({ title: 'the image as the vendor signed it', relationship: 'parentOf', label: 'vendor' }), format, new BytesBlob(bytes));
      builder.addAction({ action: 'c2pa.opened', parameters: { ingredientIds: ['vendor'] } });
    } else {
      builder.addAction({ action: 'c2pa.created', digitalSourceType: sourceType });
    }
    const placed: string[] = [];
    for (const [index, input] of components.entries()) {
      const label = `input-${index}`;
      try {
        await builder.addIngredientFromBlob(JSON.stringify({ title: input.title, relationship: 'componentOf', label }), provenanceFormatOf(input.bytes)!, new BytesBlob(input.bytes));
        placed.push(label);
      } catch {
        // the caller's own upload with a manifest store the reader cannot parse is no credential to
        // carry: it is left out, never a failure of the answer the vendor was already paid for
      }
    }
    if (placed.length > 0) builder.addAction({ action: 'c2pa.placed', parameters: { ingredientIds: placed } });
    for (const assertion of signing.assertions?.(subject) ?? []) builder.addAssertion(assertion.label, assertion.data);
    const reserve = reserveSizeOf(signing.parts);
    return await builder.sign({ alg: signing.parts.algorithm, reserveSize: reserve, sign: (claim) => coseSign1(claim, signing.parts, reserve) }, null, format, new BytesBlob(bytes));
  } finally {
    builder.free();
  }
}
