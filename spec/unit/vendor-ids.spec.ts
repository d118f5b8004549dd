// The forms of vendor ids the gateway puts into a URL (lib/providers/vendor-ids.ts): one plain segment,
// or a Google operation name of plain segments; anything else is the 502 of a lying upstream.
import { describe, expect, it } from 'vitest';
import { operationName, vendorId } from '../../lib/providers/vendor-ids.js';
import { GatewayError } from '../../lib/errors/gateway-error.js';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return GatewayError.is(error) ? error.code : 'not a GatewayError';
  }
};

describe('vendorId', () => {
  it.each([
    ['0b2f8c6e-1d2a-4c3b-9e8f-7a6b5c4d3e2f', undefined],
    ['gm3qorzdhgbfurvjtvhg6dckhu', undefined],
    ['cgt-20250101-abc_DEF', undefined],
    ['..', 'upstream_bad_response'],
    ['.', 'upstream_bad_response'],
    ['a/b', 'upstream_bad_response'],
    ['a%2Fb', 'upstream_bad_response'],
    ['a.b', 'upstream_bad_response'],
    ['', 'upstream_bad_response'],
    ['-leading', 'upstream_bad_response'],
    ['x'.repeat(201), 'upstream_bad_response'],
    ['line\nbreak', 'upstream_bad_response'],
  ])('%j → %s', (id, code) => {
    expect(codeOf(() => vendorId('fal', id, 'request_id'))).toBe(code);
  });
});

describe('operationName', () => {
  it.each([
    ['models/veo-3.0-generate-001/operations/abc123', undefined],
    ['projects/p-1/locations/us-central1/publishers/google/models/veo-3.0-generate-001/operations/0b2f8c6e-1d2a', undefined],
    ['../../../../evil', 'upstream_bad_response'],
    ['models/veo/operations/..', 'upstream_bad_response'],
    ['models/../operations/x', 'upstream_bad_response'],
    ['operations/op-1', 'upstream_bad_response'],
    ['models/veo-3.0/operations', 'upstream_bad_response'],
    ['models//operations/x', 'upstream_bad_response'],
    ['models/veo/operations/x?alt=media', 'upstream_bad_response'],
  ])('%j → %s', (name, code) => {
    expect(codeOf(() => operationName('gemini', name))).toBe(code);
  });
});
