// The `provenance` option at work (docs/provenance.md): per caller, what is read, which anchors say
// `trusted`, and whether the images are signed; and the one step every path runs on an answer's
// images (the synchronous route, the stream's final image, image tasks): signed first when the caller's
// options sign, then read, so each report describes the bytes the caller receives.
import { ERROR_CODES } from '../errors/error-codes.js';
import { GatewayError } from '../errors/gateway-error.js';
import { GatewayConfigError } from '../errors/config-error.js';
import type { ProvenanceOptions, ProvenanceReport, ProvenanceSetting, ProvenanceSigning } from '../options/provenance-options.js';
import type { Caller, Logger, ProviderName } from '../types.js';
import { c2paWasmPath } from './c2pa-engine.js';
import { type InputImage, type ReadySigning, readySigning, signImage } from './image-signing.js';
import { readManifestStore, readProvenance } from './read-provenance.js';

/** One caller's provenance: the anchors, and the signing checked once. */
export interface CallerProvenance {
  readonly trustAnchors: string | undefined;
  readonly signing: ReadySigning | undefined;
}

/** What the images are, for the operator's manifest. */
export interface ImagesMadeBy {
  readonly caller: Caller;
  readonly provider: ProviderName | undefined;
  readonly model: string;
  readonly inputs: readonly InputImage[];
}

const OPTION_NAMES = { trustAnchors: true, sign: true } as const satisfies Record<keyof ProvenanceOptions, true>;
const SIGN_NAMES = { certificate: true, privateKey: true, signer: true, algorithm: true, timestamper: true, assertions: true } as const satisfies Record<keyof ProvenanceSigning, true>;
const EXAMPLE = "provenance: { trustAnchors: readFileSync('c2pa-anchors.pem', 'utf8') }";

/** The option, checked: a fixed setting is checked whole at start, a function's answers when they come. */
export class Provenance {
  private readonly fixed: CallerProvenance | undefined;
  // a function that answers the same objects is checked once per object
  private readonly ready = new WeakMap<ProvenanceOptions, CallerProvenance>();

  constructor(
    private readonly setting: ProvenanceSetting,
    hasStorage: boolean,
  ) {
    // a missing optional peer stops the app at start with the fix, not every request with a 500
    if (c2paWasmPath() === undefined) {
      throw new GatewayConfigError(
        'provenance_peer',
        'The provenance option needs the optional peer dependency @contentauth/c2pa-wasm (and cborg to sign).',
        'npm install @contentauth/c2pa-wasm@0.15 cborg',
      );
    }
    if (typeof setting === 'function') return;
    this.fixed = checked(setting);
    if (this.fixed.signing && !hasStorage) {
      throw new GatewayConfigError(
        'option_value',
        "provenance.sign needs result storage: a `url` answer would otherwise hand out the vendor's unsigned file.",
        "storage: localResultStorage({ directory: './results', secret: process.env.RESULTS_SECRET }), provenance: { sign }",
      );
    }
  }

  /** The caller's provenance, or null: no report and no signature for it. */
  async forCaller(caller: Caller): Promise<CallerProvenance | null> {
    if (this.fixed) return this.fixed;
    const options = await (this.setting as (caller: Caller) => ProvenanceOptions | null | Promise<ProvenanceOptions | null>)(caller);
    if (options === null || options === undefined) return null;
    let ready = this.ready.get(options);
    if (!ready) {
      ready = checked(options);
      this.ready.set(options, ready);
    }
    return ready;
  }
}

function checked(options: ProvenanceOptions): CallerProvenance {
  if (typeof options !== 'object' || options === null)
    throw new GatewayConfigError('option_type', 'options.provenance must be an object (or a function of the caller answering one, or null).', EXAMPLE);
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(OPTION_NAMES, key)) throw new GatewayConfigError('option_unknown', `Unknown provenance option '${key}'.`, `use only: ${Object.keys(OPTION_NAMES).join(', ')}.`);
  }
  if (options.trustAnchors !== undefined && (typeof options.trustAnchors !== 'string' || !options.trustAnchors.includes('-----BEGIN CERTIFICATE-----'))) {
    throw new GatewayConfigError('option_value', 'provenance.trustAnchors must be the PEM text of the CA certificates to trust.', EXAMPLE);
  }
  let signing: ReadySigning | undefined;
  if (options.sign !== undefined) {
    for (const key of Object.keys(options.sign)) {
      if (!Object.hasOwn(SIGN_NAMES, key)) throw new GatewayConfigError('option_unknown', `Unknown provenance.sign option '${key}'.`, `use only: ${Object.keys(SIGN_NAMES).join(', ')}.`);
    }
    try {
      signing = readySigning(options.sign);
    } catch (error) {
      throw new GatewayConfigError('option_value', (error as Error).message, "provenance: { sign: { certificate, privateKey, algorithm: 'es256' } }");
    }
  }
  return { trustAnchors: options.trustAnchors, signing };
}

/** An answer's images after the provenance step: the bytes to deliver (signed or as they came) and each one's report. */
export interface ProvenanceResult {
  readonly bytes: Buffer[];
  readonly reports: ProvenanceReport[];
  /** Which of `bytes` differ from what came in (signed). */
  readonly signed: boolean[];
}

/**
 * Signs (when the caller's options sign) and reads each image. A signer that fails is a 502 with nothing
 * delivered. `delivered[i]` false: the caller gets the vendor's own URL for that image (no result
 * storage), so it is read and reported as the vendor made it, never signed: a signed copy nobody
 * receives would make the report a lie.
 */
export async function applyProvenance(provenance: CallerProvenance, images: readonly Buffer[], madeBy: ImagesMadeBy, logger: Logger, delivered?: readonly boolean[]): Promise<ProvenanceResult> {
  const { signing } = provenance;
  const signed = await Promise.all(
    images.map(async (bytes, index) => {
      if (!signing || delivered?.[index] === false) return undefined;
      try {
        const out = await signImage(bytes, signing, madeBy);
        return out && Buffer.from(out.buffer, out.byteOffset, out.byteLength);
      } catch (error) {
        // a vendor manifest store the reader cannot parse cannot be the parent of the operator's: the
        // image goes as the vendor sent it, reported invalid, rather than failing the paid answer
        if ((await readManifestStore(bytes, provenance.trustAnchors).catch(() => undefined))?.unreadable) {
          logger.warn({ provider: madeBy.provider, model: madeBy.model }, 'provenance: the vendor’s manifest store is unreadable; the image is delivered unsigned, reported invalid');
          return undefined;
        }
        // the operator's signer may be a KMS whose errors name accounts or keys: the log has it, the caller does not
        logger.error({ provider: madeBy.provider, model: madeBy.model, error: error instanceof Error ? error.message : String(error) }, 'provenance signing failed');
        throw new GatewayError({
          status: 502,
          code: ERROR_CODES.provenanceSigningFailed,
          message: "The image was generated but could not be signed with the operator's Content Credentials; nothing was delivered. Retry later.",
        });
      }
    }),
  );
  const bytes = images.map((image, index) => signed[index] ?? image);
  const reports = await Promise.all(bytes.map((image) => readProvenance(image, provenance.trustAnchors)));
  return { bytes, reports, signed: signed.map((item) => item !== undefined) };
}
