// The one e2e fixture: starts the fake upstreams a spec asks for, builds the resolver from them, mounts the
// router in a host app (gateway-app.ts), listens on port 0, and tears all of it down by itself, so no
// spec copies start/close/reset blocks. Fakes start before the gateway and close after it, in reverse.
import { afterAll, afterEach, onTestFinished } from 'vitest';
import type { ResolveUpstream, ResolveUpstreamInput } from '../../lib/index.js';
import type { RecordedRequest } from './fake-upstream.js';
import { type TestGateway, type TestGatewayOverrides, createTestGateway, listen, mergeTestOptions } from './gateway-app.js';

/** Anything a spec starts and must stop: the fakes in spec/helpers all fit. */
interface Closable {
  close(): Promise<void>;
  requests?: RecordedRequest[];
}

type Starters = Record<string, () => Promise<Closable>>;
type Started<F extends Starters> = { [K in keyof F]: Awaited<ReturnType<F[K]>> };

export interface GatewayWithOptions<F extends Starters> extends Omit<TestGatewayOverrides, 'resolveUpstream'> {
  /** The fakes to start, by name: `{ dashscope: startFakeDashscope, spare: startFakeLlm }`. Default none. */
  fakes?: F;
  /** The resolver, given the started fakes as its second argument. Default: resolves nothing. */
  resolve?: (input: ResolveUpstreamInput, fakes: Started<F>) => ReturnType<ResolveUpstream>;
  /** After each test, forget what the fakes recorded and the usage events (file-level fixtures only). Default false. */
  resetEach?: boolean;
}

export interface GatewayFixture<F extends Starters> extends TestGateway {
  fakes: Started<F>;
  /** http://127.0.0.1:<port> of the listening host app, for clients that need a URL. */
  url: string;
  /**
   * Another gateway on the same fakes and resolver, with some options changed (e.g. a policy flag), for
   * specs that compare two configurations; not listening (supertest), torn down with this one.
   */
  variant(overrides: Omit<TestGatewayOverrides, 'resolveUpstream'>): TestGateway;
}

/**
 * Starts the fakes and a listening gateway. Call it with `await` at a spec file's top level (torn down in
 * `afterAll`) or inside a test (torn down when the test finishes); not inside a hook, where neither applies.
 */
export async function gatewayWith<F extends Starters = Record<never, never>>(
  given: GatewayWithOptions<F> = {},
  /** A spec helper's caller's options over `given`, each option group merged field by field (mergeTestOptions). */
  changes: Omit<TestGatewayOverrides, 'resolveUpstream'> = {},
): Promise<GatewayFixture<F>> {
  const { fakes: starters, resolve, resetEach, ...overrides } = mergeTestOptions(given, changes);
  const started: Array<{ close(): Promise<void> }> = [];
  const teardown = async (): Promise<void> => {
    // reverse order: the server and router go before the fakes they call
    for (const item of started.reverse()) await item.close();
  };
  // vitest refuses onTestFinished outside a test: that refusal, not the name of the test last run (which a
  // worker that runs several files keeps), says where this fixture was made
  let inTest = true;
  try {
    onTestFinished(teardown);
  } catch {
    inTest = false;
    afterAll(teardown);
  }

  const fakes = {} as Started<F>;
  for (const [name, start] of Object.entries(starters ?? {})) {
    const fake = await start();
    started.push(fake);
    (fakes as Record<string, Closable>)[name] = fake;
  }
  const build = (changes: Omit<TestGatewayOverrides, 'resolveUpstream'>): TestGateway => {
    const built = createTestGateway({ ...mergeTestOptions(overrides, changes), ...(resolve ? { resolveUpstream: (input) => resolve(input, fakes) } : {}) });
    started.push(built);
    return built;
  };
  const gateway = build({});
  const server = await listen(gateway.app);
  started.push(server);

  if (resetEach && !inTest) {
    afterEach(() => {
      for (const fake of Object.values(fakes) as Closable[]) if (fake.requests) fake.requests.length = 0;
      gateway.usage.length = 0;
    });
  }
  return { ...gateway, fakes, url: server.url, variant: build };
}
