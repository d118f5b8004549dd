// `npm run walk`: how many files of lib/ run code during one warm POST /v1/images/generations, by
// folder, against an OpenAI-compatible upstream and against DashScope. lib/ is built one JS file per
// TS source (esbuild, no bundling) so V8 coverage names the source file; each variant runs in a child
// Node process (scripts/walk-request.ts) whose coverage window holds only the measured request.
// `--files` lists every file counted; `--functions` lists them with the functions that ran in each
// (call count and source line, from the build's source maps). docs/architecture.md "The walk of one image request"
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { WalkCoverage, WalkFunction } from './walk-request.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

const VARIANTS = [
  { name: 'openai', title: "OpenAI-compatible upstream (provider: 'openai', model gpt-image-1)" },
  { name: 'dashscope', title: "DashScope upstream (provider: 'dashscope', model x-image-2.0)" },
] as const;

/** Every TypeScript source under `folder`, as absolute paths, sorted. */
async function sources(folder: string): Promise<string[]> {
  const names = await readdir(folder, { recursive: true, encoding: 'utf8' });
  return names
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => path.join(folder, name))
    .sort();
}

/**
 * lib/ one file per source and the child bundled with its fakes, under `out` as under the repository
 * (out/lib/..., out/scripts/walk-request.js), the child's import of lib/index.js left to the per-file build.
 */
async function buildInto(out: string, sourcemap: boolean): Promise<void> {
  const common = { platform: 'node', target: 'node20', format: 'esm', logLevel: 'warning' } as const;
  await build({ ...common, entryPoints: await sources(path.join(root, 'lib')), outbase: root, outdir: out, bundle: false, sourcemap: sourcemap ? 'external' : false });
  await build({
    ...common,
    entryPoints: [path.join(root, 'scripts', 'walk-request.ts')],
    outfile: path.join(out, 'scripts', 'walk-request.js'),
    bundle: true,
    packages: 'external',
    plugins: [
      {
        name: 'per-file-lib',
        setup(builder) {
          builder.onResolve({ filter: /^\.\.\/lib\/index\.js$/ }, (args) => ({ path: args.path, external: true }));
        },
      },
    ],
  });
  // ESM, and the repository's packages (express, undici, ...) found from the temporary folder
  await writeFile(path.join(out, 'package.json'), '{ "type": "module" }\n');
  await symlink(path.join(root, 'node_modules'), path.join(out, 'node_modules'), 'dir');
}

/** A file of lib/ that ran code in the window: its lib-relative source path and the functions that ran. */
interface RanFile {
  file: string;
  functions: WalkFunction[];
}

/**
 * The lib-relative source paths (`express/authenticate.ts`) that ran code in the window. V8 reports a
 * script only when some function of it ran since the last take; a module's top-level code counts
 * only if the module was evaluated in the window.
 */
async function walk(out: string, variant: string): Promise<RanFile[]> {
  const { stdout } = await run(process.execPath, [path.join(out, 'scripts', 'walk-request.js'), variant], { cwd: out, maxBuffer: 64 * 1024 * 1024 });
  const coverage = JSON.parse(stdout) as WalkCoverage;
  const libURL = pathToFileURL(path.join(out, 'lib')).href + '/';
  return coverage.scripts
    .filter((script) => script.url.startsWith(libURL) && script.calls > 0)
    .map((script) => ({ file: script.url.slice(libURL.length).replace(/\.js$/, '.ts'), functions: script.functions }));
}

/**
 * One line per function that ran in `file`, in source order: its name (an anonymous one shows its
 * source line), its calls and its line in the TypeScript source, found through the build's source map.
 */
async function functionLines(out: string, { file, functions }: RanFile): Promise<string[]> {
  const built = path.join(out, 'lib', file.replace(/\.ts$/, '.js'));
  const [code, map, source] = await Promise.all([readFile(built, 'utf8'), readFile(`${built}.map`, 'utf8'), readFile(path.join(root, 'lib', file), 'utf8')]);
  const sourceMap = new SourceMap(JSON.parse(map) as ConstructorParameters<typeof SourceMap>[0]);
  const sourceLines = source.split('\n');
  const lineStarts = [0];
  for (let index = code.indexOf('\n'); index !== -1; index = code.indexOf('\n', index + 1)) lineStarts.push(index + 1);
  const located = functions.map((fn) => {
    let line = lineStarts.findLastIndex((start) => start <= fn.offset);
    const entry = sourceMap.findEntry(line, fn.offset - lineStarts[line]!);
    if ('originalLine' in entry && typeof entry.originalLine === 'number') line = entry.originalLine;
    const name = fn.name || `(anonymous) ${(sourceLines[line] ?? '').trim().slice(0, 80)}`;
    return { line: line + 1, text: `      L${String(line + 1).padEnd(5)} ×${String(fn.calls).padEnd(3)} ${name}` };
  });
  return located.sort((a, b) => a.line - b.line).map(({ text }) => text);
}

/** The folder of a lib-relative file, with a trailing slash; `./` for lib/ itself. */
function folderOf(file: string): string {
  const folder = path.posix.dirname(file);
  return folder === '.' ? './' : `${folder}/`;
}

async function report(out: string, title: string, ran: RanFile[], libFiles: number, list: 'none' | 'files' | 'functions'): Promise<string> {
  const files = [...new Set(ran.map(({ file }) => file))].sort();
  const byFolder = new Map<string, number>();
  for (const file of files) byFolder.set(folderOf(file), (byFolder.get(folderOf(file)) ?? 0) + 1);
  const rows: Array<[string, string]> = [['folder', 'files'], ...[...byFolder.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([folder, count]): [string, string] => [folder, String(count)])];
  rows.push(['total', String(files.length)]);
  const width = Math.max(...rows.map(([folder]) => folder.length)) + 2;
  const lines = [title, '', ...rows.map(([folder, count]) => `${folder.padEnd(width)}${count.padStart(5)}`)];
  lines.push('', `${files.length} of the ${libFiles} source files of lib/ ran code during the request.`);
  if (list === 'files') lines.push('', ...files.map((file) => `  ${file}`));
  if (list === 'functions') {
    lines.push('');
    for (const file of [...ran].sort((a, b) => (a.file < b.file ? -1 : 1))) lines.push(`  ${file.file}`, ...(await functionLines(out, file)));
  }
  return lines.join('\n');
}

const list = process.argv.includes('--functions') ? 'functions' : process.argv.includes('--files') ? 'files' : 'none';
const out = await mkdtemp(path.join(os.tmpdir(), 'gateway-walk-'));
try {
  const libFiles = (await sources(path.join(root, 'lib'))).length;
  await buildInto(out, list === 'functions');
  const walks = await Promise.all(VARIANTS.map((variant) => walk(out, variant.name)));
  const text = await Promise.all(VARIANTS.map((variant, index) => report(out, variant.title, walks[index]!, libFiles, list)));
  process.stdout.write(`${text.join('\n\n')}\n`);
} finally {
  await rm(out, { recursive: true, force: true });
}
