// A fake OpenAI-compatible image vendor (upstreams §4.1) that answers the C2PA reference
// implementation's own test files (spec/fixtures/c2pa/): the prompt names the files, one per image,
// comma-separated (`name+forged` adds a report of the vendor's own); `response_format: 'url'` (or a
// prompt that starts `url:`) answers URLs on this server, else b64_json. It counts the paid work it starts (one per generation call).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Upstream } from '../../lib/index.js';
import { type FakeUpstream, sendJson, startFakeUpstream } from './fake-upstream.js';

export const C2PA_FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/c2pa');

/** The bytes of a fixture file. */
export function c2paFixture(name: string): Buffer {
  return readFileSync(path.join(C2PA_FIXTURES, name));
}

/** A PEM file of the fixtures. */
export function c2paPem(name: string): string {
  return readFileSync(path.join(C2PA_FIXTURES, name), 'utf8');
}

/** The test roots the fixtures' signers chain to: the specs' trust anchors. */
export const C2PA_ANCHORS = c2paPem('test_cert_root_bundle.pem');

/** Signing with the fixtures' es256 test certificate (its chain) and key. */
export const C2PA_SIGNING = { certificate: c2paPem('es256-chain.pem'), privateKey: c2paPem('es256-key.pem'), algorithm: 'es256' as const };

/** The resolver of a gateway in front of the fake vendor: every model on its OpenAI-compatible API. */
export function resolveC2paVendor({ model }: { model: string }, { vendor }: { vendor: FakeC2paVendor }): Upstream {
  return { provider: 'openai', baseURL: `${vendor.origin}/v1`, apiKey: 'sk-vendor-key-0123456789', model };
}

export interface FakeC2paVendor extends FakeUpstream {
  /** Paid generations started. */
  started(): number;
  /** Files a spec makes (hostile or odd ones), answered by name before the fixtures. */
  files: Map<string, Buffer>;
}

export async function startFakeC2paVendor(): Promise<FakeC2paVendor> {
  let started = 0;
  const files = new Map<string, Buffer>();
  const fileOf = (name: string): Buffer => files.get(name) ?? c2paFixture(name);
  const fake = await startFakeUpstream(
    (request, res) => {
      if (request.method === 'GET' && request.path.startsWith('/files/')) {
        const bytes = fileOf(path.basename(request.path));
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
        res.end(bytes);
        return;
      }
      if (request.method !== 'POST' || (!request.path.endsWith('/images/generations') && !request.path.endsWith('/images/edits'))) {
        sendJson(res, 404, { error: { message: 'unknown path', type: 'invalid_request_error', param: null, code: null } });
        return;
      }
      started += 1;
      const body = (request.json ?? {}) as { prompt?: string; response_format?: string; stream?: boolean };
      const asked = body.prompt ?? /name="prompt"\r\n\r\n([^\r]*)/.exec(request.body.toString('latin1'))?.[1] ?? 'no_manifest.jpg';
      // `url:` first: a model that answers URLs by default (dall-e-3), whatever response_format says
      const prompt = asked.replace(/^url:/, '');
      const asUrl = asked !== prompt || body.response_format === 'url' || request.body.toString('latin1').includes('name="response_format"\r\n\r\nurl');
      const names = prompt.split(',').map((name) => name.trim());
      // `name+forged`: a lying vendor that writes a glowing report of its own beside the file
      const data = names.map((given) => {
        const name = given.replace(/\+forged$/, '');
        const image = asUrl ? { url: `${fake.origin}/files/${name}` } : { b64_json: fileOf(name).toString('base64') };
        return name === given ? image : { ...image, provenance: { c2pa: 'valid', signer: 'OpenAI', trusted: true } };
      });
      if (body.stream === true) {
        // OpenAI's image stream: one completed event per image, the vendor's own fields beside b64_json
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `c2pa-${started}` });
        for (const [index, item] of data.entries()) {
          const image = 'b64_json' in item ? { b64_json: item.b64_json } : { b64_json: fileOf(names[index]!.replace(/\+forged$/, '')).toString('base64') };
          const event = {
            type: 'image_generation.completed',
            ...image,
            created_at: 1764633600,
            size: '1024x1024',
            quality: 'auto',
            background: 'auto',
            output_format: 'jpeg',
            usage: { total_tokens: 0, input_tokens: 0, output_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 } },
            ...('provenance' in item ? { provenance: item.provenance } : {}),
          };
          res.write(`event: image_generation.completed\ndata: ${JSON.stringify(event)}\n\n`);
        }
        res.end();
        return;
      }
      sendJson(res, 200, { created: 1764633600, data }, { 'x-request-id': `c2pa-${started}` });
    },
    (requestPath) => !requestPath.startsWith('/files/'),
  );
  return Object.assign(fake, { started: () => started, files });
}
