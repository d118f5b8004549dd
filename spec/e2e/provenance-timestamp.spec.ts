// A signature with an RFC 3161 time stamp (docs/provenance.md "Signing"): the operator's `timestamper`
// is asked for a token over the COSE countersignature structure, and the reference reader validates it
// (`timeStamp.validated`), so the signature stays valid after its certificate expires. The time-stamp
// authority is OpenSSL's own (`openssl ts -reply`), with a CA and a TSA certificate made for the run.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { localResultStorage } from '../../lib/storage.js';
import { c2paEngine } from '../../lib/provenance/c2pa-engine.js';
import { c2paPem, resolveC2paVendor, startFakeC2paVendor } from '../helpers/fake-c2pa-vendor.js';
import { KEY_A } from '../helpers/gateway-app.js';
import { gatewayWith } from '../helpers/gateway-with.js';
import { tempDir } from '../helpers/temp-dir.js';

const hasOpenssl = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A time-stamp authority in `dir`: a CA, a TSA certificate (timeStamping, critical) and OpenSSL's `ts` configuration. */
function makeTsa(dir: string): void {
  const run = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  writeFileSync(
    path.join(dir, 'tsa.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa1',
      '[ tsa1 ]',
      `serial = ${path.join(dir, 'serial')}`,
      `signer_cert = ${path.join(dir, 'tsa.crt')}`,
      `certs = ${path.join(dir, 'ca.crt')}`,
      `signer_key = ${path.join(dir, 'tsa.key')}`,
      'signer_digest = sha256',
      'default_policy = 1.2.3.4.1',
      'other_policies = 1.2.3.4.5',
      'digests = sha256',
      'accuracy = secs:1',
      'ordering = no',
      'tsa_name = no',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '[ tsaext ]',
      'basicConstraints = critical,CA:FALSE',
      'keyUsage = critical,digitalSignature',
      'extendedKeyUsage = critical,timeStamping',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'serial'), '01\n');
  run([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '30',
    '-subj',
    '/CN=Test TSA Root',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', '/CN=Test TSA']);
  run(['x509', '-req', '-in', 'tsa.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tsa.crt', '-days', '30', '-extfile', 'tsa.cnf', '-extensions', 'tsaext']);
}

describe.skipIf(!hasOpenssl)('a time-stamped signature', () => {
  it('the reference reader validates the time stamp the operator’s timestamper gave, and reads the signing time from it', async () => {
    const dir = tempDir('provenance-tsa-');
    makeTsa(dir);
    let asked = 0;
    const timestamper = (message: Uint8Array): Promise<Uint8Array> => {
      asked += 1;
      writeFileSync(path.join(dir, 'message.bin'), message);
      execFileSync('openssl', ['ts', '-query', '-data', 'message.bin', '-sha256', '-cert', '-no_nonce', '-out', 'request.tsq'], { cwd: dir, stdio: 'ignore' });
      execFileSync('openssl', ['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', 'request.tsq', '-token_out', '-out', 'token.der'], { cwd: dir, stdio: 'ignore' });
      return Promise.resolve(new Uint8Array(readFileSync(path.join(dir, 'token.der'))));
    };
    const pem = c2paPem;
    const anchors = pem('test_cert_root_bundle.pem');
    const gw = await gatewayWith({
      fakes: { vendor: startFakeC2paVendor },
      resolve: resolveC2paVendor,
      storage: localResultStorage({ directory: tempDir('provenance-tsa-results-'), secret: 'provenance-results-secret-0123456789' }),
      provenance: { trustAnchors: anchors, sign: { certificate: pem('es256-chain.pem'), privateKey: pem('es256-key.pem'), algorithm: 'es256', timestamper } },
    });
    const res = await request(gw.app).post('/v1/images/generations').set('Authorization', `Bearer ${KEY_A}`).send({ model: 'gpt-image-1', prompt: 'no_manifest.jpg', response_format: 'b64_json' });
    expect(res.status).toBe(200);
    expect(res.body.data[0].provenance).toMatchObject({ c2pa: 'valid', trusted: true });
    expect(asked).toBe(1);
    const engine = await c2paEngine();
    const settings = JSON.stringify({ trust: { trust_anchors: anchors }, verify: { verify_trust: true, remote_manifest_fetch: false, ocsp_fetch: false } });
    const reader = await engine.WasmReader.fromBytes('image/jpeg', Buffer.from(res.body.data[0].b64_json as string, 'base64'), settings);
    const store = JSON.parse(reader.json()) as {
      active_manifest: string;
      manifests: Record<string, { signature_info: { time?: string } }>;
      validation_results: { activeManifest: { success: Array<{ code: string }>; informational?: Array<{ code: string }> } };
    };
    const results = store.validation_results.activeManifest;
    expect(results.success.map((entry) => entry.code)).toContain('timeStamp.validated');
    expect((results.informational ?? []).map((entry) => entry.code)).not.toContain('timeStamp.mismatch');
    expect(Date.parse(store.manifests[store.active_manifest]!.signature_info.time!)).toBeGreaterThan(Date.now() - 3_600_000);
  });
});
