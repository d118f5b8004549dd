// A redis-server of a test's own, on a free loopback port, that the test may stop and start again
// (a real outage) without touching the shared Redis. Data lives in an append-only file fsynced on
// every write, so a restart comes back with everything written before the stop, as a production
// Redis with persistence would.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface RedisServerProcess {
  url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data; does nothing while it runs. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRedisServerProcess(): Promise<RedisServerProcess> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gw-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async (): Promise<void> => {
    if (child) return;
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          started.stdout.off('data', onData);
          started.stdout.resume();
          started.stderr.resume();
          resolve();
        }
      };
      started.stdout.on('data', onData);
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
    });
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
