// The CPU time a bench child process has spent, read from /proc: what `npm run bench` and
// bench/ab.ts divide by the answers it served (CPU per request, the steadiest figure on a shared
// machine).
import { readFileSync } from 'node:fs';

/** User + system CPU time of a process in µs (Linux /proc; 0 elsewhere: the column then says 0). */
export function cpuTimeUs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime (fields 14 and 15 of stat) in clock ticks, 100 per second on Linux
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}
