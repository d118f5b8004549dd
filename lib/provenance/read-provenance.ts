// One image's or video's Content Credentials, read and validated by the reference implementation and
// reported in the answer's terms (docs/provenance.md "The report"): `valid` where the reference reader
// says Valid or Trusted, `trusted` where it says Trusted against the operator's anchors, and the active
// manifest's failure codes on `invalid`. Remote manifests and OCSP are not fetched. A file without an
// embedded manifest store is `absent` by walking its boxes alone.
import type { ProvenanceReport } from '../options/provenance-options.js';
import { c2paEngine } from './c2pa-engine.js';
import { hasManifestStore, provenanceFormatOf } from './manifest-boxes.js';

// the untrusted signer is reported by `trusted: false`, not as a failure of an otherwise valid file
const TRUST_CODES = new Set(['signingCredential.untrusted']);

/** The reader's settings for a check with (or without) the operator's trust anchors. */
function readerSettings(trustAnchors: string | undefined): string {
  const verify = { verify_trust: trustAnchors !== undefined, remote_manifest_fetch: false, ocsp_fetch: false };
  return JSON.stringify(trustAnchors !== undefined ? { trust: { trust_anchors: trustAnchors }, verify } : { verify });
}

/** The report of `bytes`; a format the reader does not know is `absent` (nothing to read). */
export async function readProvenance(bytes: Uint8Array, trustAnchors: string | undefined): Promise<ProvenanceReport> {
  return (await readManifestStore(bytes, trustAnchors)).report;
}

/**
 * The report of `bytes`, and whether the file carries a manifest store the reader could not parse at
 * all (a broken or hostile one): nothing a new manifest can take as its parent.
 */
export async function readManifestStore(bytes: Uint8Array, trustAnchors: string | undefined): Promise<{ report: ProvenanceReport; unreadable: boolean }> {
  const format = provenanceFormatOf(bytes);
  if (!format || !hasManifestStore(bytes, format)) return { report: { c2pa: 'absent' }, unreadable: false };
  const engine = await c2paEngine();
  let store: ManifestStoreJson;
  try {
    const reader = await engine.WasmReader.fromBytes(format, bytes, readerSettings(trustAnchors));
    try {
      store = JSON.parse(reader.json()) as ManifestStoreJson;
    } finally {
      reader.free();
    }
  } catch (error) {
    return { report: { c2pa: 'invalid', codes: [codeOfReaderError(error)] }, unreadable: true };
  }
  return { report: reportOf(store, trustAnchors !== undefined), unreadable: false };
}

/** The answer's report of a manifest store as the reference reader gave it. */
function reportOf(store: ManifestStoreJson, withAnchors: boolean): ProvenanceReport {
  const active = store.active_manifest !== undefined ? store.manifests?.[store.active_manifest] : undefined;
  if (!active) return { c2pa: 'invalid', codes: ['claim.missing'] };
  const state = store.validation_state;
  const failures = (store.validation_results?.activeManifest?.failure ?? []).map((entry) => entry.code);
  const valid = state === 'Valid' || state === 'Trusted';
  const report: ProvenanceReport = { c2pa: valid ? 'valid' : 'invalid' };
  const signer = active.signature_info?.issuer ?? active.signature_info?.common_name;
  if (signer) report.signer = signer;
  const generator = claimGeneratorOf(active);
  if (generator) report.claim_generator = generator;
  const actions = actionsOf(active);
  const created = actions.find((action) => action.action === 'c2pa.created' && typeof action.digitalSourceType === 'string');
  if (created) report.digital_source_type = created.digitalSourceType as string;
  if (actions.length > 0) report.actions = actions.map((action) => action.action);
  if (withAnchors && valid) report.trusted = state === 'Trusted';
  if (!valid) {
    const codes = failures.filter((code) => !TRUST_CODES.has(code));
    report.codes = codes.length > 0 ? codes : failures;
  }
  return report;
}

function claimGeneratorOf(manifest: ManifestJson): string | undefined {
  if (typeof manifest.claim_generator === 'string' && manifest.claim_generator !== '') return manifest.claim_generator;
  const info = manifest.claim_generator_info ?? [];
  const named = info.filter((entry) => typeof entry.name === 'string').map((entry) => (entry.version ? `${entry.name}/${entry.version}` : entry.name));
  return named.length > 0 ? named.join(' ') : undefined;
}

function actionsOf(manifest: ManifestJson): ActionJson[] {
  const found: ActionJson[] = [];
  for (const assertion of manifest.assertions ?? []) {
    if (!/^c2pa\.actions(\.v\d+)?$/.test(assertion.label)) continue;
    const list = (assertion.data as { actions?: unknown } | undefined)?.actions;
    if (Array.isArray(list)) for (const action of list) if (typeof (action as ActionJson)?.action === 'string') found.push(action as ActionJson);
  }
  return found;
}

// the reader's errors, as the C2PA specification's status codes where one fits
function codeOfReaderError(error: unknown): string {
  const text = String(error);
  if (text.includes('RemoteManifest')) return 'manifest.inaccessible';
  if (text.includes('UnknownAlgorithm')) return 'algorithm.unsupported';
  if (text.includes('JumbfNotFound') || text.includes('JumbfParseError') || text.includes('InvalidClaim')) return 'claim.malformed';
  return 'general.error';
}

/** The manifest store as the reference reader's `json()` gives it (the fields the report reads). */
export interface ManifestStoreJson {
  active_manifest?: string;
  manifests?: Record<string, ManifestJson>;
  validation_state?: 'Invalid' | 'Valid' | 'Trusted';
  validation_results?: { activeManifest?: { failure?: Array<{ code: string }> } };
}

interface ManifestJson {
  claim_generator?: string;
  claim_generator_info?: Array<{ name?: string; version?: string }>;
  signature_info?: { issuer?: string; common_name?: string };
  assertions?: Array<{ label: string; data?: unknown }>;
}

interface ActionJson {
  action: string;
  digitalSourceType?: unknown;
}
