// The bytes of a stored video kept for its Content Credentials (docs/provenance.md): all of them up to
// the bound, none past it, so a vendor's huge video never sits whole in memory for the reader.
import { describe, expect, it } from 'vitest';
import { KeptBytes } from '../../lib/gateway/results/durable-results.js';

describe('KeptBytes', () => {
  it.each([
    { name: 'under the bound', chunks: [3, 4], max: 10, kept: 7, overflowed: false },
    { name: 'exactly the bound', chunks: [5, 5], max: 10, kept: 10, overflowed: false },
    { name: 'one byte over', chunks: [5, 6], max: 10, kept: 0, overflowed: true },
    { name: 'over, then more chunks', chunks: [11, 1, 1], max: 10, kept: 0, overflowed: true },
  ])('$name: keeps $kept bytes, overflowed $overflowed', ({ chunks, max, kept, overflowed }) => {
    const keep = new KeptBytes(max);
    for (const size of chunks) keep.push(Buffer.alloc(size));
    expect(Buffer.concat(keep.chunks).length).toBe(kept);
    expect(keep.overflowed).toBe(overflowed);
    expect(keep.size).toBeGreaterThanOrEqual(kept);
  });
});
