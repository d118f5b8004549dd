// The example on an address beyond loopback (examples/server.ts demoKeyPolicy): with a real vendor key
// set it refuses to start without an explicit GATEWAY_DEMO_KEY and never fills that key into the
// playground; it warns at start. Its `[usage]` line quotes caller text, so a model name with a newline
// cannot forge a line of its own.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../lib/index.js';
import { DEFAULT_DEMO_KEY, createExampleApp, demoKeyPolicy, startupLines, usageLine } from '../../examples/server.js';

describe('demoKeyPolicy', () => {
  it.each([
    ['127.0.0.1', {}, { key: DEFAULT_DEMO_KEY, fillIn: true, warned: false, refused: false }],
    ['127.0.0.1', { DASHSCOPE_API_KEY: 'sk-real' }, { key: DEFAULT_DEMO_KEY, fillIn: true, warned: false, refused: false }],
    ['0.0.0.0', {}, { key: DEFAULT_DEMO_KEY, fillIn: true, warned: true, refused: false }],
    ['0.0.0.0', { DASHSCOPE_API_KEY: 'sk-real' }, { key: DEFAULT_DEMO_KEY, fillIn: false, warned: false, refused: true }],
    ['::', { OPENAI_API_KEY: 'sk-real' }, { key: DEFAULT_DEMO_KEY, fillIn: false, warned: false, refused: true }],
    ['192.168.1.10', { ARK_API_KEY: 'ark-real', GATEWAY_DEMO_KEY: 'sk-chosen-secret' }, { key: 'sk-chosen-secret', fillIn: false, warned: true, refused: false }],
  ])('HOST=%s with %j', (host, env, expected) => {
    const policy = demoKeyPolicy(host, env);
    expect({ key: policy.key, fillIn: policy.fillIn, warned: policy.warnings.length > 0, refused: policy.refusal !== undefined }).toEqual(expected);
  });

  it('the refusal names the variables and what to set', () => {
    expect(demoKeyPolicy('0.0.0.0', { DASHSCOPE_API_KEY: 'sk-real', ARK_API_KEY: 'ark-real' }).refusal).toBe(
      'HOST=0.0.0.0 is beyond loopback and DASHSCOPE_API_KEY, ARK_API_KEY are set: the playground would hand every visitor a key that spends that vendor account. Set GATEWAY_DEMO_KEY to a secret key of your own (it is not filled in), or listen on HOST=127.0.0.1.',
    );
  });
});

describe('createExampleApp beyond loopback with a real vendor key', () => {
  it('refuses to start without GATEWAY_DEMO_KEY', async () => {
    await expect(createExampleApp({ host: '0.0.0.0', env: { DASHSCOPE_API_KEY: 'sk-real-vendor-key' } })).rejects.toThrow(/Set GATEWAY_DEMO_KEY/);
  });

  it('with GATEWAY_DEMO_KEY: the page does not carry the key, the start lines warn and do not print it', async () => {
    const example = await createExampleApp({ host: '0.0.0.0', env: { DASHSCOPE_API_KEY: 'sk-real-vendor-key', GATEWAY_DEMO_KEY: 'sk-operator-chosen-1' } });
    try {
      const page = await request(example.app).get('/');
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('sk-operator-chosen-1');
      expect(page.text).toContain('"defaultKey":""');
      const lines = startupLines(example, 'http://localhost:3000');
      expect(lines.join('\n')).not.toContain('sk-operator-chosen-1');
      expect(lines.filter((line) => line.startsWith('warning: HOST=0.0.0.0'))).toHaveLength(1);
    } finally {
      await example.close();
    }
  });
});

describe('usageLine', () => {
  const event: UsageEvent = { caller: { id: 'demo-tenant' }, route: 'images.generations', model: 'x-image-2.0', images: 1, status: 200, latencyMs: 12.4 };

  it.each([
    ['x-image-2.0', 'model="x-image-2.0"'],
    ['x\n[usage] caller=victim route=images.generations model=x status=200', 'model="x\\n[usage] caller=victim route=images.generations model=x status=200"'],
    ['a"b\r\u2028c', 'model="a\\"b\\r\u2028c"'],
  ])('quotes the model %j', (model, expected) => {
    const line = usageLine({ ...event, model });
    expect(line.split('\n')).toHaveLength(1);
    expect(line.split('\r')).toHaveLength(1);
    expect(line).toContain(expected);
    expect(line.startsWith('[usage] caller="demo-tenant" route=images.generations ')).toBe(true);
  });
});
