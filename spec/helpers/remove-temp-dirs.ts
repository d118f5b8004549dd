// Vitest setup file: once a spec file's tests are over, the result folders it made outside a test
// (spec/helpers/temp-dir.ts) are removed, so a run leaves nothing in the system temp directory.
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir.js';

afterAll(removeTempDirs);
