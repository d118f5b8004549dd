// Small real images for tests: a 1x1 PNG and its Data URL form.
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export const TINY_PNG_DATA_URL = `data:image/png;base64,${TINY_PNG.toString('base64')}`;

export const PUBLIC_IMAGE_URL = 'https://images.example.com/subject.png';

// A 1x1 JPEG and a 1x1 GIF, so multi-image tests can tell three images apart by their bytes.
export const TINY_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

export const TINY_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
