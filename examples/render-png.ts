// Real PNG pictures for the simulated DashScope, with nothing but node:zlib: a tiny encoder (signature,
// IHDR, IDAT, IEND; 8-bit RGB) and a renderer whose picture follows from the prompt, so two prompts
// give two visibly different images and an edit (stripes) never looks like a text-to-image (gradient).
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/** What a picture is drawn from. Equal input, equal picture: the simulation is deterministic. */
export interface PictureInput {
  prompt: string;
  /** The reference images of an edit (their URLs or Data URLs); empty for text-to-image. */
  images: readonly string[];
  /** Which of the n images of one request this is, so they differ from each other. */
  index: number;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// The CRC-32 of the PNG spec (ISO 3309, polynomial 0xEDB88320), one table built once.
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** One chunk: length, type, data, and a CRC over type + data (the length is not covered). */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** Encodes 8-bit RGB pixels (row-major, 3 bytes a pixel) as a PNG file. */
function encodePng(width: number, height: number, rgb: Uint8Array): Buffer {
  if (rgb.length !== width * height * 3) throw new RangeError(`expected ${width * height * 3} bytes of RGB, got ${rgb.length}`);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type 2: truecolour RGB
  header[10] = 0; // compression: deflate
  header[11] = 0; // filter method 0
  header[12] = 0; // no interlace
  // every scanline starts with its filter type; 0 (None) keeps the encoder trivial and deflate still
  // squeezes gradients and stripes well
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y += 1) {
    raw[y * (stride + 1)] = 0;
    raw.set(rgb.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  }
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

type Rgb = readonly [number, number, number];

function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

/** Draws the picture for a prompt: a diagonal gradient with a soft disc, or stripes for an edit. */
export function renderPicture(input: PictureInput): Buffer {
  const { width, height } = input;
  // colours come from the prompt alone, so "the same prompt" reads as the same palette; the index and
  // the reference images only move the composition
  const palette = createHash('sha256').update(input.prompt, 'utf8').digest();
  const layout = createHash('sha256')
    .update(JSON.stringify([input.prompt, input.images, input.index]), 'utf8')
    .digest();
  const from: Rgb = [palette[0]!, palette[1]!, palette[2]!];
  const to: Rgb = [palette[3]!, palette[4]!, palette[5]!];
  const accent: Rgb = [255 - palette[0]!, 255 - palette[1]!, 255 - palette[2]!];
  const rgb = new Uint8Array(width * height * 3);
  const angle = (layout[0]! / 256) * Math.PI * 2;
  const [dx, dy] = [Math.cos(angle), Math.sin(angle)];
  const edit = input.images.length > 0;
  // stripes: a period of 6-13% of the larger side, one more stripe family per reference image
  const period = Math.max(4, Math.round(Math.max(width, height) * (0.06 + (layout[1]! / 255) * 0.07)));
  const disc = { x: (0.2 + (layout[2]! / 255) * 0.6) * width, y: (0.2 + (layout[3]! / 255) * 0.6) * height, r: Math.min(width, height) * 0.22 };

  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      // position along the gradient direction, 0..1
      const t = Math.min(1, Math.max(0, ((x / width - 0.5) * dx + (y / height - 0.5) * dy) / 1.42 + 0.5));
      let colour = mix(from, to, t);
      if (edit) {
        // diagonal stripes; each further reference image crosses them with another set
        let band = Math.floor((x + y) / period) % 2;
        if (input.images.length > 1) band ^= Math.floor((x - y + height) / (period * 1.5)) % 2;
        if (input.images.length > 2) band ^= Math.floor(y / (period * 2)) % 2;
        if (band === 1) colour = mix(colour, accent, 0.65);
      } else {
        const distance = Math.hypot(x - disc.x, y - disc.y) / disc.r;
        if (distance < 1) colour = mix(colour, accent, 0.8 * (1 - distance * distance));
      }
      const offset = (y * width + x) * 3;
      rgb[offset] = Math.round(colour[0]);
      rgb[offset + 1] = Math.round(colour[1]);
      rgb[offset + 2] = Math.round(colour[2]);
    }
  }
  return encodePng(width, height, rgb);
}
