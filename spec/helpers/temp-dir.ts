// Folders a spec writes results into, in the system temp directory, removed when the test that made
// one ends, or, made at a spec file's top level or in a hook, when the file's tests are over (the
// setup file spec/helpers/remove-temp-dirs.ts): a run leaves nothing behind on a machine that is used
// again (docs/contributing.md "The test suite").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

const madeOutsideTests = new Set<string>();

function remove(directory: string): void {
  rmSync(directory, { recursive: true, force: true });
}

/** A new folder `<tmp>/<prefix>XXXXXX`, removed with everything in it once its test (or its file) is done. */
export function tempDir(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => remove(directory));
  } catch {
    // not inside a test (a file's top level, a beforeAll): removed when the file's tests are over
    madeOutsideTests.add(directory);
  }
  return directory;
}

/** Removes the folders made outside a test; the setup file calls it once a spec file's tests are over. */
export function removeTempDirs(): void {
  for (const directory of madeOutsideTests) remove(directory);
  madeOutsideTests.clear();
}
