// The order vitest starts spec files in (vitest.config.ts `sequence.sequencer`, docs/contributing.md "The
// commands"). Once vitest has timings of a previous run (node_modules/.vite), its own order stands: the
// longest first. In a fresh clone it has none and starts the largest files first, which puts the
// multi-instance specs (`*-redis.spec.ts`) last: short files, but each waits half a minute on leases,
// killed processes and queued jobs, so started last they are the run's tail. Without timings they start
// first, largest first, and their waits overlap the rest of the suite.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The multi-instance specs, which wait on real time far more than they work. */
const WAITS = /-redis\.spec\.ts$/;

export class WaitsFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const timed = (spec: TestSpecification): boolean => this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`) !== undefined;
    const waits = sorted.filter((spec) => WAITS.test(spec.moduleId) && !timed(spec));
    return [...waits, ...sorted.filter((spec) => !waits.includes(spec))];
  }
}
