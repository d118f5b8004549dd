// Runs the SaaS host example (`npm run start:saas`): the app of app.ts on HOST:PORT (127.0.0.1:3100),
// with simulated DashScope and Ark on loopback, its own Redis client when REDIS_URL is set, and the
// tenant identifier sent to vendors when SAFETY_IDENTIFIER_SECRET is (docs/security.md).
// Graceful shutdown (docs/deployment.md "Graceful shutdown"): on SIGTERM or SIGINT it stops accepting,
// lets requests finish, closes the gateway (its scheduler, sockets and timers), then what the host
// itself opened (its Redis client, the simulations), and the process exits by itself: nothing is left
// holding the event loop, so no process.exit is needed.
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startSimulatedArk } from '../simulated-ark.js';
import { startSimulatedDashscope } from '../simulated-dashscope.js';
import { MOUNT_PATH, createSaasHost } from './app.js';

async function main(): Promise<void> {
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 3100);
  const logger = pino({ level: process.env.LOG_LEVEL || 'info' });
  const dashscope = await startSimulatedDashscope();
  const ark = await startSimulatedArk();
  // the host's own client: the gateway uses it and never closes it
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
  const { app, gateway } = createSaasHost({
    logger,
    redis,
    redisPrefix: process.env.REDIS_PREFIX || 'saas-host',
    dashscopeBaseURL: dashscope.baseURL,
    arkBaseURL: ark.baseURL,
    safetyIdentifierSecret: process.env.SAFETY_IDENTIFIER_SECRET || undefined,
  });
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port: bound } = server.address() as AddressInfo;
  logger.info({ url: `http://${host}:${bound}`, openaiBaseURL: `http://${host}:${bound}${MOUNT_PATH}/v1`, playground: `http://${host}:${bound}/playground` }, 'saas host listening');

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // requests in flight get 10 s; then their connections are cut
    const force = setTimeout(() => server.closeAllConnections(), 10_000).unref();
    server.close(() => {
      clearTimeout(force);
      void (async () => {
        await gateway.close(); // the gateway's own: scheduler workers, timers, pooled upstream sockets
        await redis?.quit(); // the host's: the gateway never closes what it was given
        await dashscope.close();
        await ark.close();
        logger.info({}, 'closed');
      })().catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exitCode = 1;
      });
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// listen only when run directly, never when imported by the specs
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
