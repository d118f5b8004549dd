// redactSecrets: what may reach a log or a client from a host's or an upstream's message.
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../lib/errors/redact.js';

describe('redactSecrets', () => {
  it.each<[string, string, string[], string]>([
    ['a bearer credential', 'got Bearer abc.def-123 here', [], 'got Bearer [redacted] here'],
    ['a key the gateway knows', 'no route for tenant-key-0123456789', ['tenant-key-0123456789'], 'no route for [redacted]'],
    ['an sk- key nobody named', 'upstream config sk-operator-9f8e7d6c5b unusable', [], 'upstream config [redacted] unusable'],
    ['a long opaque token', `token ${'Q1w2E3r4'.repeat(6)} expired`, [], 'token [redacted] expired'],
    ['base64 image bytes', `image data:image/png;base64,${'iVBORw0KGgo'.repeat(5)}==`, [], 'image data:image/png;base64,[redacted]'],
    ['a request id and a UUID stay', 'request id 0baeb880-1c2d-4e5f-8a9b-0c1d2e3f4a5b (r-17)', [], 'request id 0baeb880-1c2d-4e5f-8a9b-0c1d2e3f4a5b (r-17)'],
    ['a long hex request id stays', 'Request id: 0217280951205813c183a1fb82c613f4d4485b7d388d5b4d02e7e', [], 'Request id: 0217280951205813c183a1fb82c613f4d4485b7d388d5b4d02e7e'],
    ['ordinary words stay', 'the asset store is full', ['key'], 'the asset store is full'],
  ])('%s', (_name, text, secrets, expected) => {
    expect(redactSecrets(text, secrets)).toBe(expected);
  });
});
