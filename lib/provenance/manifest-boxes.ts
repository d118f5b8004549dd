// Where a C2PA manifest store sits in a file, found by walking its boxes alone (docs/provenance.md
// "What is read"): JPEG APP11 segments carrying JUMBF, PNG `caBX` chunks, the WebP `C2PA` chunk and an
// ISO BMFF (MP4) `uuid` box with the C2PA identifier. An image without one is reported `absent`
// without loading the reader at all, so a gateway whose vendors sign nothing pays a few microseconds
// per image.

/** The formats whose manifest stores are read; `video/mp4` is read and reported, never signed. */
export type ProvenanceFormat = 'image/jpeg' | 'image/png' | 'image/webp' | 'video/mp4';

// the C2PA box of ISO BMFF files: uuid d8fec3d6-1b0e-483c-9297-5828877ec481
const C2PA_UUID = Buffer.from('d8fec3d61b0e483c92975828877ec481', 'hex');

/** The format of the bytes, when it is one whose manifest store can be read. */
export function provenanceFormatOf(bytes: Uint8Array): ProvenanceFormat | undefined {
  if (bytes.length >= 8 && bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12)).toString('latin1');
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  if (head.slice(4, 8) === 'ftyp') return 'video/mp4';
  return undefined;
}

/** Whether the file carries an embedded C2PA manifest store (a malformed file reads as none). */
export function hasManifestStore(bytes: Uint8Array, format: ProvenanceFormat): boolean {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  switch (format) {
    case 'image/jpeg':
      return jpegHasJumbf(data);
    case 'image/png':
      return pngHasCabx(data);
    case 'image/webp':
      return webpHasC2pa(data);
    case 'video/mp4':
      return bmffHasC2pa(data, 0, data.length, 0);
  }
}

// JPEG: markers up to the start of scan; APP11 (0xFFEB) with the JPEG XT common identifier "JP" and a
// JUMBF superbox whose description box labels it "c2pa"
function jpegHasJumbf(data: Buffer): boolean {
  let at = 2;
  while (at + 4 <= data.length) {
    if (data[at] !== 0xff) return false;
    const marker = data[at + 1]!;
    if (marker === 0xd9 || marker === 0xda) return false;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    const length = data.readUInt16BE(at + 2);
    if (length < 2) return false;
    if (marker === 0xeb && at + 2 + length <= data.length) {
      const segment = data.subarray(at + 4, at + 2 + length);
      if (segment.subarray(0, 2).toString('latin1') === 'JP' && segment.includes('jumb') && segment.includes('c2pa')) return true;
    }
    at += 2 + length;
  }
  return false;
}

// PNG: chunks after the signature; the manifest store is the `caBX` chunk
function pngHasCabx(data: Buffer): boolean {
  let at = 8;
  while (at + 8 <= data.length) {
    const length = data.readUInt32BE(at);
    const type = data.subarray(at + 4, at + 8).toString('latin1');
    if (type === 'caBX') return true;
    if (type === 'IEND') return false;
    at += 12 + length;
  }
  return false;
}

// WebP: RIFF chunks after the 12-byte header; the manifest store is the `C2PA` chunk
function webpHasC2pa(data: Buffer): boolean {
  let at = 12;
  while (at + 8 <= data.length) {
    const type = data.subarray(at, at + 4).toString('latin1');
    const length = data.readUInt32LE(at + 4);
    if (type === 'C2PA') return true;
    at += 8 + length + (length % 2);
  }
  return false;
}

// ISO BMFF: top-level boxes (and those of `moov`), a `uuid` box with the C2PA identifier
function bmffHasC2pa(data: Buffer, start: number, end: number, depth: number): boolean {
  let at = start;
  while (at + 8 <= end) {
    let size = data.readUInt32BE(at);
    const type = data.subarray(at + 4, at + 8).toString('latin1');
    let header = 8;
    if (size === 1 && at + 16 <= end) {
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return false;
    if (type === 'uuid' && at + header + 16 <= end && data.subarray(at + header, at + header + 16).equals(C2PA_UUID)) return true;
    if (type === 'moov' && depth === 0 && bmffHasC2pa(data, at + header, at + size, 1)) return true;
    at += size;
  }
  return false;
}
