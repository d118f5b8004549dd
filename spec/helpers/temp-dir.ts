// Folders a spec writes results into, in the system temp directory, removed when the test that made
// one ends, or, made at a spec file's top level, when the file's tests are over: a run leaves nothing
// behind on a machine that is used again (docs/contributing.md "The test suite").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

/** A new folder `<tmp>/<prefix>XXXXXX`, removed with everything in it once its test (or its file) is done. */
export function tempDir(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  const remove = (): void => rmSync(directory, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    // not inside a test: the file's own teardown
    afterAll(remove);
  }
  return directory;
}
