// Runs a TypeScript entry point in a fresh network namespace (only `lo`, no route anywhere else) with
// its own /etc/hosts, so a test can make the kernel refuse a connect() at once (ENETUNREACH) for a
// public address and point names at it without touching the machine's DNS. Needs root (unshare).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Whether this machine lets the suite create network and mount namespaces. */
export function netnsAvailable(): boolean {
  const probe = spawnSync('unshare', ['-n', '-m', 'true'], { stdio: 'ignore' });
  return probe.status === 0;
}

export interface NetnsRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `hosts`: name -> address lines of the namespace's /etc/hosts. The child is killed after `deadlineMs`. */
export async function runInNetns(entry: string, hosts: Record<string, string>, deadlineMs = 60_000): Promise<NetnsRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'netns-'));
  const hostsFile = path.join(dir, 'hosts');
  writeFileSync(
    hostsFile,
    `127.0.0.1 localhost\n::1 localhost\n${Object.entries(hosts)
      .map(([name, address]) => `${address} ${name}`)
      .join('\n')}\n`,
  );
  const script = `mount --bind "$1" /etc/hosts && ip link set lo up && exec "$2" --import tsx "$3"`;
  const child = spawn('unshare', ['-n', '-m', 'bash', '-c', script, 'netns', hostsFile, process.execPath, entry], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });
  return { code, stdout, stderr };
}
