// Small real images for tests: a 1x1 PNG and its Data URL form.
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

export const TINY_PNG_DATA_URL = `data:image/png;base64,${TINY_PNG.toString('base64')}`;

export const PUBLIC_IMAGE_URL = 'https://images.example.com/subject.png';
