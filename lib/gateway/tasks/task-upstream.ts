// The upstream a stored task runs on, for video and image tasks alike: keys are never stored, so the
// resolver is asked again (they can rotate), and of the upstreams it names now the task's is the one
// of the provider that created it (the one that knows its id), at the same base URL when several are.
import type { ResolveUpstreamInput } from '../../options/host-hooks.js';
import type { TaskRecord } from '../../stores/tasks/task-store.js';
import type { Caller, Upstream } from '../../types.js';
import type { ResolvedOptions } from '../resolve-options.js';
import { resolveUpstreams } from '../routing/resolve-upstreams.js';

/**
 * The upstream a stored task (video or image) runs on, for a query or a background poll: keys are
 * never stored, so the resolver is asked again (they can rotate); undefined when it no longer names it.
 */
export async function resolveTaskUpstream(
  options: ResolvedOptions,
  record: Pick<TaskRecord, 'model' | 'upstream'>,
  route: ResolveUpstreamInput['route'],
  caller: Caller,
  req: ResolveUpstreamInput['req'],
): Promise<Upstream | undefined> {
  const upstreams = await resolveUpstreams(options, { model: record.model, route, caller, req });
  return taskUpstreamAmong(upstreams, record);
}

/**
 * Of the upstreams the resolver named now, the one a stored task runs on: the provider that created
 * it (the one that knows its id), at the same base URL when several are named.
 */
export function taskUpstreamAmong(upstreams: readonly Upstream[], record: Pick<TaskRecord, 'upstream'>): Upstream | undefined {
  const same = upstreams.filter((upstream) => upstream.provider === record.upstream.provider);
  return same.find((candidate) => sameBase(candidate.baseURL, record.upstream.baseURL)) ?? same[0];
}

function sameBase(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}
