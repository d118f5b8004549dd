// A second C2PA reader, written apart from the reference implementation the gateway uses
// (@trustnxt/c2pa-ts, pure TypeScript): the gateway's own signed output must validate in it too, so a
// bug shared by the gateway and its reader cannot pass unseen.
import { JPEG, PNG } from '@trustnxt/c2pa-ts/asset';
import { SuperBox } from '@trustnxt/c2pa-ts/jumbf';
import { ManifestStore, ValidationResult } from '@trustnxt/c2pa-ts/manifest';

/** Whether the independent reader finds the file's active manifest valid, and the codes that failed. */
export async function independentlyValidated(bytes: Buffer): Promise<{ valid: boolean; failed: string[] }> {
  const asset = JPEG.canRead(bytes) ? new JPEG(bytes) : PNG.canRead(bytes) ? new PNG(bytes) : undefined;
  if (!asset) throw new Error('the independent reader reads JPEG and PNG');
  let result: ValidationResult;
  try {
    const jumbf = asset.getManifestJUMBF();
    if (!jumbf) return { valid: false, failed: ['claim.missing'] };
    result = await ManifestStore.read(SuperBox.fromBuffer(new Uint8Array(jumbf))).validate(asset);
  } catch (error) {
    result = ValidationResult.fromError(error as Error);
  }
  return { valid: result.isValid, failed: result.statusEntries.filter((entry) => !entry.success).map((entry) => String(entry.code)) };
}
