// The playground router without a browser: one HTML page under a Content-Security-Policy whose script
// hash matches the inline script, the config as an inert JSON block (no value can close the script
// tag), and options checked at creation with a GatewayConfigError that shows the fix.
import { createHash } from 'node:crypto';
import vm from 'node:vm';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../lib/index.js';
import { createPlayground, type PlaygroundOptions } from '../../lib/playground.js';
import { PLAYGROUND_SCRIPT } from '../../lib/express/playground/playground-script.js';

function appWith(options?: PlaygroundOptions): express.Express {
  const app = express();
  app.use('/play', createPlayground(options));
  return app;
}

describe('createPlayground', () => {
  it("serves a script a browser can parse (a template literal's escapes are easy to get wrong)", () => {
    // compiled, not run: a syntax error would stop the whole page in the browser
    expect(() => new vm.Script(PLAYGROUND_SCRIPT)).not.toThrow();
  });

  it('serves one self-contained page whose CSP allows exactly its inline script', async () => {
    const response = await request(appWith()).get('/play/').expect(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const hash = createHash('sha256').update(PLAYGROUND_SCRIPT, 'utf8').digest('base64');
    expect(response.headers['content-security-policy']).toContain(`script-src 'sha256-${hash}'`);
    expect(response.headers['content-security-policy']).toContain("connect-src 'self';");
    expect(response.text).toContain(`<script>${PLAYGROUND_SCRIPT}</script>`);
    // offline: nothing is loaded from another origin
    // nothing loaded from anywhere: the one link is the empty inline favicon (no request, so no 404)
    expect(response.text).not.toMatch(/<(script|link)[^>]+(src|href)="(?!data:,")/);
    expect(response.text).toContain('<link rel="icon" href="data:,">');
  });

  it('puts the options into an inert JSON block, escaped so no value can end the script tag', async () => {
    const response = await request(appWith({ title: '</script><script>alert(1)</script>', defaultKey: 'sk-demo', apiBase: '/ai/', pollIntervalsMs: [2000, 1000] }))
      .get('/play/')
      .expect(200);
    const block = /<script type="application\/json" id="playground-config">([^<]*)<\/script>/.exec(response.text);
    expect(block).not.toBeNull();
    expect(JSON.parse(block![1]!)).toEqual({
      title: '</script><script>alert(1)</script>',
      apiBase: '/ai',
      defaultKey: 'sk-demo',
      models: { image: 'x-image-2.0', edit: 'x-image-edit', video: 'x-video' },
      pollIntervalsMs: [2000, 1000],
    });
    expect(response.text).toContain('<title>&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;</title>');
  });

  it('allows connections to an apiBase on another origin', async () => {
    const response = await request(appWith({ apiBase: 'https://gateway.example.com/ai' }))
      .get('/play/')
      .expect(200);
    expect(response.headers['content-security-policy']).toContain("connect-src 'self' https://gateway.example.com;");
  });

  it.each([
    ['an apiBase that is not a path or URL', { apiBase: 'gateway' }, /apiBase/],
    ['polling faster than every 500 ms', { pollIntervalsMs: { video: [100] } }, /pollIntervalsMs/],
    ['an empty polling schedule', { pollIntervalsMs: [] }, /pollIntervalsMs/],
    ['an unknown model slot', { models: { audio: 'x' } }, /models takes image, edit and video/],
    ['a title that is not a string', { title: 5 }, /title must be a string/],
  ])('refuses %s at creation, with the fix', (_name, options, message) => {
    const create = () => createPlayground(options as unknown as PlaygroundOptions);
    expect(create).toThrow(GatewayConfigError);
    expect(create).toThrow(message);
    expect(create).toThrow(/Fix: createPlayground|Fix: models/);
  });
});
