// The forward order of task states, so a task never goes back. contract §3 names only
// the terminal states and leaves the set open ("non-terminal state names: not shown"), and Ark's
// GET may answer from a lagging replica, so order is judged by kind, not by name:
//   queued (0)  <  running and every other non-terminal name (1)  <  terminal (2)
// An unknown non-terminal state ranks with running: work has begun, and it is not the end. Two
// states of one rank (running, then an unknown one) are both forward: the newer one is delivered.
/** contract §3: the named terminal states. The set is open: any other status counts as non-terminal. */
const TERMINAL_STATES = new Set(['succeeded', 'failed', 'expired', 'cancelled', 'canceled']);

export function isTerminalStatus(status: string | undefined): boolean {
  return status !== undefined && TERMINAL_STATES.has(status.toLowerCase());
}

const QUEUED = 0;
const IN_PROGRESS = 1;
const TERMINAL = 2;

/** The rank of a status in the forward order (queued 0, in progress 1, terminal 2). */
export function statusRank(status: string): number {
  if (isTerminalStatus(status)) return TERMINAL;
  return status.toLowerCase() === 'queued' ? QUEUED : IN_PROGRESS;
}

/** True when `status` is a state a task at `current` has already passed (it would go backwards). */
export function isPassedStatus(status: string, current: string | undefined): boolean {
  return current !== undefined && statusRank(status) < statusRank(current);
}
