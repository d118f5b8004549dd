// Installable as the README says (docs/getting-started.md "Install"): `npm pack` on a copy of the sources (no dist/
// there) runs the `prepare` build, so the tarball always carries dist/ and LICENSE and none of the
// sources; the tarball then installs into a fresh ESM host and a fresh CommonJS host, each running the
// README's first snippet (type annotations stripped by esbuild, its port made 0) against the package.
// npm resolves the dependencies from its cache first (`--prefer-offline`): the project's own `npm ci` filled it.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCES = ['package.json', 'package-lock.json', 'README.md', 'LICENSE', 'lib', 'scripts', 'tsconfig.json', 'tsconfig.build.json'];
// the Express major of this run (vitest.config.ts): each host installs that one
const EXPRESS_MAJOR = process.env.GATEWAY_EXPRESS === '4' ? 4 : 5;
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/** The README's first ```ts block: the complete snippet a user copies. */
export function readmeSnippet(readme: string): string {
  const match = /^```ts\n([\s\S]*?)^```/m.exec(readme);
  if (!match) throw new Error('README.md has no ```ts block');
  return match[1]!;
}

// after the snippet: ask the gateway for its models with the snippet's key, print them, shut down
const PROBE = `
server.on('listening', async () => {
  const port = server.address().port;
  const response = await fetch('http://127.0.0.1:' + port + '/v1/models', { headers: { authorization: 'Bearer sk-tenant-a' } });
  const unknown = await fetch('http://127.0.0.1:' + port + '/v1/unknown');
  // the playground page ships inside the bundle: no file to copy, it serves from the installed package
  const { createPlayground } = await import('express-image-gateway/playground');
  app.use('/playground', createPlayground());
  const page = await fetch('http://127.0.0.1:' + port + '/playground/');
  const html = await page.text();
  console.log(JSON.stringify({ models: await response.json(), unknown: unknown.status, playground: page.status, title: /<title>([^<]*)<\\/title>/.exec(html)?.[1] }));
  server.close();
  await gateway.close();
});
`;

describe('npm pack, then npm install of the tarball', () => {
  let work: string;
  let tarball: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'package-install-'));
    const source = path.join(work, 'source');
    await mkdir(source);
    for (const entry of SOURCES) await cp(path.join(ROOT, entry), path.join(source, entry), { recursive: true });
    // the build tools, without copying them; dist/ deliberately absent: prepare must make it
    await symlink(path.join(ROOT, 'node_modules'), path.join(source, 'node_modules'), 'dir');
    // prepare's own output shares stdout with npm's, so the tarball is found by its name instead
    await run('npm', ['pack', '--pack-destination', work, ...NPM_FLAGS], { cwd: source, maxBuffer: 16 * 1024 * 1024 });
    const packed = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
    expect(packed).toEqual([expect.stringMatching(/^express-image-gateway-\d+\.\d+\.\d+\.tgz$/)]);
    tarball = path.join(work, packed[0]!);
  }, 120_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('packs dist/ (built by prepare), README and LICENSE, and no sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    for (const file of [
      ...['index', 'redis', 'storage', 'playground', 'testing'].flatMap((name) => [`${name}.js`, `${name}.cjs`, `${name}.d.ts`, `${name}.d.cts`].map((built) => `package/dist/${built}`)),
      'package/LICENSE',
      'package/README.md',
      'package/package.json',
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((file) => /^package\/(lib|spec|examples|scripts)\//.test(file))).toEqual([]);
    // one rolled-up declaration file per entry and module format: no tree of internal declarations
    expect(files.filter((file) => /^package\/dist\/.+\//.test(file))).toEqual([]);
  });

  it.each([
    ['ESM', 'module', 'esm', 'host.mjs'],
    ['CommonJS', 'commonjs', 'cjs', 'host.cjs'],
  ] as const)(
    'installs into a fresh %s host that runs the README snippet',
    async (_name, type, format, file) => {
      const host = path.join(work, `host-${format}`);
      await mkdir(host);
      await writeFile(path.join(host, 'package.json'), JSON.stringify({ name: `host-${format}`, version: '1.0.0', private: true, type }));
      await run('npm', ['install', tarball, `express@^${EXPRESS_MAJOR}`, ...NPM_FLAGS], { cwd: host, maxBuffer: 16 * 1024 * 1024 });
      expect(await readdir(path.join(host, 'node_modules/express-image-gateway/dist'))).toEqual(expect.arrayContaining(['index.js', 'index.cjs']));

      const snippet = readmeSnippet(await readFile(path.join(ROOT, 'README.md'), 'utf8')).replace('app.listen(3000)', "app.listen(0, '127.0.0.1')");
      const { code } = await transform(snippet + PROBE, { loader: 'ts', format, target: 'node20' });
      await writeFile(path.join(host, file), code);
      const { stdout } = await run(process.execPath, [file], { cwd: host, timeout: 60_000 });
      const printed = JSON.parse(stdout.trim().split('\n').at(-1)!) as { models: { data: Array<{ id: string }> }; unknown: number; playground: number; title: string };
      // the snippet names its own models and lists them with models.list: the model list shows exactly those
      expect(printed.models.data.map((model) => model.id)).toEqual(['ds-plus', 'ds-edit']);
      expect(printed.unknown).toBe(404);
      expect(printed).toEqual(expect.objectContaining({ playground: 200, title: 'Image gateway playground' }));
    },
    180_000,
  );
});
