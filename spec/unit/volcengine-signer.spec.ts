// signVolcengineRequest against test vectors computed INDEPENDENTLY of it: the table below is the
// verbatim output of `python3 spec/fixtures/volcengine_sign_reference.py`, a separate implementation
// (Python hashlib/hmac, its own percent-encoding) of the rules of the official volcengine SDKs
// (volc-sdk-golang base/sign.go, volc-sdk-python SignerV4). Rerun the script to recompute them.
// No official vector (known AK/SK/date -> signature) was found in the volcengine SDK repositories:
// their signer tests only check shapes.
import { describe, expect, it } from 'vitest';
import { signVolcengineRequest, volcengineQueryString } from '../../lib/transport/volcengine-signer.js';

interface Vector {
  name: string;
  input: {
    method: string;
    host: string;
    path: string;
    query: Record<string, string>;
    headers: Record<string, string>;
    body: string;
    accessKeyId: string;
    secretAccessKey: string;
    region: string;
    service: string;
    /** ISO 8601 instant */
    date: string;
  };
  headers: Record<string, string>;
}

// verbatim output of the script (JSON), left unformatted so a rerun can be diffed against it
const VECTORS: Vector[] = [
  {
    name: 'CreateAsset JSON body, cn-beijing',
    input: {
      method: 'POST',
      host: 'ark.cn-beijing.volcengineapi.com',
      path: '/',
      query: {
        Action: 'CreateAsset',
        Version: '2024-01-01',
      },
      body: '{"GroupId":"group-20260320120601-hsw4s","URL":"https://example.com/refs/portrait.png","AssetType":"Image","Name":"portrait","ProjectName":"default"}',
      accessKeyId: 'AKLTZmFrZS1hY2Nlc3Mta2V5LWlk',
      secretAccessKey: 'WkdWbVlXdHNkQzF6WldOeVpYUXRhMlY1TFdadmNpMTBaWE4wY3c9PQ==',
      region: 'cn-beijing',
      service: 'ark',
      date: '2026-03-20T12:01:47Z',
      headers: {},
    },
    headers: {
      Host: 'ark.cn-beijing.volcengineapi.com',
      'Content-Type': 'application/json',
      'X-Date': '20260320T120147Z',
      'X-Content-Sha256': '0d39174b9dc636c2bda118c5aac7e27ddb174c528fe11605871110b76788306c',
      Authorization:
        'HMAC-SHA256 Credential=AKLTZmFrZS1hY2Nlc3Mta2V5LWlk/20260320/cn-beijing/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=92f2902948ab3f673f2bb1a816082e893fd66c25e70152adae20ac90371b2f26',
    },
  },
  {
    name: 'empty body, leap day at 23:59:59, ap-southeast-1',
    input: {
      method: 'POST',
      host: 'open.volcengineapi.com',
      path: '',
      query: {
        Version: '2024-01-01',
        Action: 'ListAssetGroups',
      },
      body: '',
      accessKeyId: 'AKLTanVzdC1hbm90aGVyLWtleQ',
      secretAccessKey: 'another/secret+with=symbols',
      region: 'ap-southeast-1',
      service: 'ark',
      date: '2024-02-29T23:59:59Z',
      headers: {},
    },
    headers: {
      Host: 'open.volcengineapi.com',
      'Content-Type': 'application/json',
      'X-Date': '20240229T235959Z',
      'X-Content-Sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      Authorization:
        'HMAC-SHA256 Credential=AKLTanVzdC1hbm90aGVyLWtleQ/20240229/ap-southeast-1/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=9c524f2e7ad6f3034439495da1266a2800eb1e3e30e6dba2157383c203ea7a72',
    },
  },
  {
    name: "query and path needing encoding (space, '/', '+', '~', !'()*, unicode), GET",
    input: {
      method: 'get',
      host: 'iam.volcengineapi.com',
      path: '/api v3/资产/a+b~c',
      query: {
        Action: 'ListAssets',
        Version: '2024-01-01',
        'Filter.Name': 'a b/c+d~e',
        Emoji: '猫 ✓ 🐱',
        Sym: "!'()*",
        Empty: '',
        ключ: 'значение',
        b: '2',
        B: '1',
        a_: '3',
        'a-': '4',
      },
      body: '',
      accessKeyId: 'AKLTZmFrZS1hY2Nlc3Mta2V5LWlk',
      secretAccessKey: 'WkdWbVlXdHNkQzF6WldOeVpYUXRhMlY1TFdadmNpMTBaWE4wY3c9PQ==',
      region: 'cn-shanghai',
      service: 'iam',
      date: '1999-12-31T00:00:00Z',
      headers: {},
    },
    headers: {
      Host: 'iam.volcengineapi.com',
      'Content-Type': 'application/json',
      'X-Date': '19991231T000000Z',
      'X-Content-Sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      Authorization:
        'HMAC-SHA256 Credential=AKLTZmFrZS1hY2Nlc3Mta2V5LWlk/19991231/cn-shanghai/iam/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=86f3f4f3f328afbb719091856e8f54bca8fd32cc44b19bc6c242d3e514fc6189',
    },
  },
  {
    name: 'extra headers: X-Security-Token signed (trimmed), Accept not; :443 dropped from host; ms truncated',
    input: {
      method: 'POST',
      host: 'ark.cn-guangzhou.volcengineapi.com:443',
      path: '/',
      query: {
        Action: 'GetAsset',
        Version: '2024-01-01',
      },
      headers: {
        'X-Security-Token': '  STS2eyJ0b2tlbiI6dHJ1ZX0=  ',
        Accept: 'application/json',
      },
      body: '{"Id":"asset-20260320120147-pqwhc","ProjectName":"default"}',
      accessKeyId: 'AKLTZmFrZS1hY2Nlc3Mta2V5LWlk',
      secretAccessKey: 'WkdWbVlXdHNkQzF6WldOeVpYUXRhMlY1TFdadmNpMTBaWE4wY3c9PQ==',
      region: 'cn-guangzhou',
      service: 'ark',
      date: '2026-01-05T03:04:05.678Z',
    },
    headers: {
      'X-Security-Token': '  STS2eyJ0b2tlbiI6dHJ1ZX0=  ',
      Accept: 'application/json',
      Host: 'ark.cn-guangzhou.volcengineapi.com:443',
      'Content-Type': 'application/json',
      'X-Date': '20260105T030405Z',
      'X-Content-Sha256': 'a543e7079e97cce9f81bb2e50c95abab647882db9e2db333ef5b09268cdc3b8e',
      Authorization:
        'HMAC-SHA256 Credential=AKLTZmFrZS1hY2Nlc3Mta2V5LWlk/20260105/cn-guangzhou/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date;x-security-token, Signature=311b3731d6bd1e1c281373b6ee1b54f63f91848b14771653921ab3c3607b6fcc',
    },
  },
  {
    name: 'unicode JSON body, non-default port kept in host, path prefix',
    input: {
      method: 'POST',
      host: '127.0.0.1:8080',
      path: '/proxy/volc/',
      query: {
        Action: 'CreateAsset',
        Version: '2024-01-01',
      },
      body: '{"GroupId":"group-1","URL":"https://example.com/图片 1.png?x=1&y=2","AssetType":"Video","Name":"视频 – “引号”"}',
      accessKeyId: 'AKLTZmFrZS1hY2Nlc3Mta2V5LWlk',
      secretAccessKey: 'WkdWbVlXdHNkQzF6WldOeVpYUXRhMlY1TFdadmNpMTBaWE4wY3c9PQ==',
      region: 'cn-beijing',
      service: 'ark',
      date: '2030-07-01T08:00:00Z',
      headers: {},
    },
    headers: {
      Host: '127.0.0.1:8080',
      'Content-Type': 'application/json',
      'X-Date': '20300701T080000Z',
      'X-Content-Sha256': '3d5e4dad2bc59bd8cb164f44a68402cf92b49612c774ba41a4d57bfb9d0036f3',
      Authorization:
        'HMAC-SHA256 Credential=AKLTZmFrZS1hY2Nlc3Mta2V5LWlk/20300701/cn-beijing/ark/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=d6b7a066852ff8cdb9cb2103e3784fc1641858c4dcceed8319b611a1993370f4',
    },
  },
];

describe('signVolcengineRequest', () => {
  it.each(VECTORS)('$name', ({ input, headers }) => {
    expect(signVolcengineRequest({ ...input, date: new Date(input.date) })).toEqual(headers);
  });

  it('leaves headers out of the signature unless they are X-* or Content-Md5', () => {
    const base = VECTORS[0]!.input;
    const plain = signVolcengineRequest({ ...base, date: new Date(base.date) });
    const withAccept = signVolcengineRequest({ ...base, headers: { Accept: 'application/json' }, date: new Date(base.date) });
    const withMd5 = signVolcengineRequest({ ...base, headers: { 'Content-Md5': 'bWQ1' }, date: new Date(base.date) });
    expect(withAccept).toEqual({ ...plain, Accept: 'application/json' });
    expect(withMd5.Authorization).toContain('SignedHeaders=content-md5;content-type;host;x-content-sha256;x-date, ');
  });

  it.each(['Host', 'content-type', 'X-Date', 'x-content-sha256', 'Authorization'])('refuses a caller-set %s header', (name) => {
    const base = VECTORS[0]!.input;
    expect(() => signVolcengineRequest({ ...base, headers: { [name]: 'x' }, date: new Date(base.date) })).toThrow(TypeError);
  });

  it('never puts the secret in what it returns', () => {
    const base = VECTORS[0]!.input;
    const headers = signVolcengineRequest({ ...base, date: new Date(base.date) });
    expect(JSON.stringify(headers)).not.toContain(base.secretAccessKey);
  });
});

describe('volcengineQueryString', () => {
  it.each<{ query: Record<string, string>; expected: string }>([
    { query: {}, expected: '' },
    { query: { Version: '2024-01-01', Action: 'CreateAsset' }, expected: 'Action=CreateAsset&Version=2024-01-01' },
    { query: { q: 'a b+c/d~e' }, expected: 'q=a%20b%2Bc%2Fd~e' },
    { query: { s: "!'()*" }, expected: 's=%21%27%28%29%2A' },
    // UTF-8 byte order: 'B' < 'a' < 'é'
    { query: { é: '1', a: '2', B: '3' }, expected: 'B=3&a=2&%C3%A9=1' },
  ])('$expected', ({ query, expected }) => {
    expect(volcengineQueryString(query)).toBe(expected);
  });
});
