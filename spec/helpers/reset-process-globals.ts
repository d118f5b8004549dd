// Vitest setup file: a worker runs one spec file after another in the same process (vitest.config.ts
// `isolate: false`, docs/contributing.md "The commands"), so once a file's tests are over, what it
// installed for the whole process is taken away, as a process of its own would lose it: the gateway's
// clock (a skipping clock, lib/clock.ts) and the OpenTelemetry API's global providers, context manager
// and propagator. A file that installs one removes it itself in `afterAll`; this hook, which runs after
// the file's own, is the net under a file that failed before it could.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { afterAll } from 'vitest';

/** The name lib/clock.ts reads an installed clock under. */
const CLOCK = Symbol.for('express-image-gateway.clock');

afterAll(() => {
  delete (globalThis as { [CLOCK]?: unknown })[CLOCK];
  trace.disable();
  metrics.disable();
  propagation.disable();
  context.disable();
});
