// A host Express app with the gateway mounted, as a user would write it. `express` resolves to
// Express 4 when the suite runs with GATEWAY_EXPRESS=4 (vitest.config.ts), so every e2e spec runs on both.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createGatewayRouter, type GatewayOptions, type GatewayRouter, staticKeys, type UsageEvent } from '../../lib/index.js';

export const KEY_A = 'sk-test-tenant-a-0123456789abcdef';
export const KEY_B = 'sk-test-tenant-b-fedcba9876543210';

export interface TestGateway {
  app: express.Express;
  router: GatewayRouter;
  usage: UsageEvent[];
  close(): Promise<void>;
}

/** The option groups whose fields a spec's overrides add to the test defaults, field by field. */
const GROUPS = ['allow', 'limits', 'models', 'tenancy'] as const;

/** `overrides` over `base`, each group of GROUPS merged one level deep (a group's own fields replace). */
export function mergeTestOptions<T extends Partial<GatewayOptions>>(base: T, overrides: Partial<GatewayOptions>): T {
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const group of GROUPS) {
    const [a, b] = [base[group], overrides[group]];
    if (a && b && typeof a === 'object' && typeof b === 'object') merged[group] = { ...a, ...b };
  }
  return merged as T;
}

/** Gateway options over the test defaults, plus where to mount and whether the host parses JSON first. */
export type TestGatewayOverrides = Partial<GatewayOptions> & { mountPath?: string; hostJson?: boolean };

export function createTestGateway(overrides: TestGatewayOverrides = {}): TestGateway {
  const { mountPath, hostJson, ...options } = overrides;
  const usage: UsageEvent[] = [];
  const router = createGatewayRouter(
    mergeTestOptions(
      {
        verifyKey: staticKeys({ [KEY_A]: { id: 'tenant-a' }, [KEY_B]: { id: 'tenant-b' } }),
        resolveUpstream: () => null,
        onUsage: (event) => usage.push(event),
        // the fake upstreams serve result images from 127.0.0.1; specs of the public-only rule pass false
        allow: { privateResultUrls: true },
        // the specs' own failures would fill the test output; specs of logging pass their logger
        logger: false,
        // a file-level gateway meets one scripted upstream failure per test, and each test expects that
        // failure, not 503 upstream_unavailable because earlier tests opened the circuit breaker (on by
        // default); the routing specs pass their own `routing` with the breaker on
        routing: { breaker: false },
      },
      options,
    ),
  );
  const app = express();
  if (hostJson) app.use(express.json());
  if (mountPath) app.use(mountPath, router);
  else app.use(router);
  app.get('/host/ping', (_req, res) => {
    res.json({ host: 'pong' });
  });
  return { app, router, usage, close: () => router.close() };
}

/** Listens on 127.0.0.1:0, for clients that need a URL (the openai SDK). */
export async function listen(app: express.Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
