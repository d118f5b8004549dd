// Provenance (docs/benchmarks.md "Provenance"): the time the `provenance` option adds per image, in
// this process, on the C2PA reference implementation's own test files (spec/fixtures/c2pa/): reading
// and validating a signed JPEG (with trust anchors), an image without a manifest (the byte walk alone),
// signing with `es256` (an image without a manifest, and one the vendor signed: its manifest becomes
// the parent ingredient), and the pipeline's whole step for a signing caller (sign, then read the
// signed file). Each the median over N images one after another; the first read of the process
// (the WebAssembly module loaded) apart. Part of `npm run bench` (`--only=provenance`); alone:
// `npx tsx bench/provenance-cost.ts` (BENCH_PROVENANCE_IMAGES: N, default 40).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyProvenance } from '../lib/provenance/provenance-policy.js';
import { readySigning, signImage } from '../lib/provenance/image-signing.js';
import { readProvenance } from '../lib/provenance/read-provenance.js';
import type { Logger } from '../lib/types.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string): Buffer => readFileSync(path.join(here, '../spec/fixtures/c2pa', name));

export interface ProvenanceFigures {
  images: number;
  /** The first read of the process: the WebAssembly module loaded and compiled, ms. */
  firstReadMs: number;
  /** Medians per image, ms. */
  readValidJpegMs: number;
  readAbsentJpegMs: number;
  signAbsentJpegMs: number;
  signVendorJpegMs: number;
  signPngMs: number;
  signAndReadJpegMs: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round = (ms: number): number => Math.round(ms * 1000) / 1000;

async function timed(count: number, work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return round(median(times));
}

export async function measureProvenance(images = Number(process.env.BENCH_PROVENANCE_IMAGES ?? 40)): Promise<ProvenanceFigures> {
  const anchors = fixture('test_cert_root_bundle.pem').toString('utf8');
  const signing = readySigning({ certificate: fixture('es256-chain.pem').toString('utf8'), privateKey: fixture('es256-key.pem').toString('utf8'), algorithm: 'es256' });
  const valid = fixture('C.jpg');
  const absent = fixture('no_manifest.jpg');
  const png = fixture('sample1.png');
  const subject = { provider: 'openai' as const, model: 'gpt-image-1', caller: { id: 'tenant-bench' }, inputs: [] };
  const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };

  const first = performance.now();
  await readProvenance(valid, anchors);
  const firstReadMs = round(performance.now() - first);
  // one of each before timing: the builder's first use compiles its paths too
  await signImage(absent, signing, subject);
  return {
    images,
    firstReadMs,
    readValidJpegMs: await timed(images, () => readProvenance(valid, anchors)),
    readAbsentJpegMs: await timed(images, () => readProvenance(absent, anchors)),
    signAbsentJpegMs: await timed(images, () => signImage(absent, signing, subject)),
    signVendorJpegMs: await timed(images, () => signImage(valid, signing, subject)),
    signPngMs: await timed(images, () => signImage(png, signing, subject)),
    signAndReadJpegMs: await timed(images, () => applyProvenance({ trustAnchors: anchors, signing }, [absent], subject, quiet)),
  };
}

export function printProvenanceFigures(figures: ProvenanceFigures): void {
  console.log(`\nprovenance, ms per image (median of ${figures.images}, one after another):\n`);
  console.log('| step | ms |');
  console.log('|---|---|');
  console.log(`| first read of the process (WebAssembly loaded) | ${figures.firstReadMs} |`);
  console.log(`| read and validate a signed JPEG (${(fixture('C.jpg').length / 1024).toFixed(0)} KiB, with anchors) | ${figures.readValidJpegMs} |`);
  console.log(`| read a JPEG without a manifest (${(fixture('no_manifest.jpg').length / 1024).toFixed(0)} KiB, byte walk) | ${figures.readAbsentJpegMs} |`);
  console.log(`| sign (es256) a JPEG without a manifest | ${figures.signAbsentJpegMs} |`);
  console.log(`| sign (es256) a JPEG the vendor signed (parent ingredient) | ${figures.signVendorJpegMs} |`);
  console.log(`| sign (es256) a PNG without a manifest (${(fixture('sample1.png').length / 1024).toFixed(0)} KiB) | ${figures.signPngMs} |`);
  console.log(`| a signing caller's step: sign, then read the signed JPEG | ${figures.signAndReadJpegMs} |`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = await measureProvenance();
  printProvenanceFigures(figures);
  console.log(`\nBENCH_PROVENANCE ${JSON.stringify(figures)}`);
}
