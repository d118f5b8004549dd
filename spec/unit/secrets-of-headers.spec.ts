// secretsOfHeaders (lib/providers/call-context.ts): the values of a request's headers an upstream's
// error may quote back, a bearer token also without its scheme.
import { describe, expect, it } from 'vitest';
import { secretsOfHeaders } from '../../lib/providers/call-context.js';

describe('secretsOfHeaders', () => {
  it.each<[string, Record<string, string>, string[]]>([
    ['a bearer token, with and without its scheme', { authorization: 'Bearer ya29.token-value' }, ['ya29.token-value', 'Bearer ya29.token-value']],
    ["Azure's api-key and Google's x-goog-api-key", { 'api-key': 'k1', 'x-goog-api-key': 'k2' }, ['k1', 'k2']],
    ['an operator header', { 'x-proxy-secret': 's3cret-value' }, ['s3cret-value']],
    ['the body headers are no secrets', { 'content-type': 'application/json', accept: 'application/json', 'content-length': '12', 'accept-encoding': 'identity' }, []],
  ])('%s', (_name, headers, expected) => {
    expect(secretsOfHeaders(headers)).toEqual(expected);
  });
});
