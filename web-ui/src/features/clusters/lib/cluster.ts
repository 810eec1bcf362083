import type { Cluster, ClusterState } from '@/lib/api/types';

/** What names a cluster: its public address is /clusters/<owner>/<product>/<version>/<id>. */
export type ClusterAddress = Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>;

/** The public address of a cluster, as the API has it. */
export function clusterPath(c: ClusterAddress): string {
  return `/clusters/${c.owner}/${c.product}/${c.version}/${c.id}`;
}

/** States after which a cluster changes only when someone acts; its event stream ends there. */
export const SETTLED_STATES: ReadonlySet<string> = new Set<ClusterState>(['RUNNING', 'STOPPED', 'FAILED', 'DESTROYED']);

/** Whether a page showing a cluster in `state` has nothing more to wait for. Once a delete was
 * accepted only DESTROYED is (a deleted cluster may still read RUNNING for a moment). Any other
 * state, including one this UI does not know yet (a newer server's), is followed live. */
export function isSettled(state: string | undefined, deleting = false): boolean {
  if (state === undefined) return false;
  return deleting ? state === 'DESTROYED' : SETTLED_STATES.has(state);
}

/** A timestamp of the API as a Date: RFC 3339 (`…Z`); one without a zone is UTC. */
export function parseTimestamp(text: string): Date {
  return new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`);
}

/** How many members of each role a cluster has now (its members are named <cluster>-<role>-<index>). */
export function roleCounts(c: Pick<Cluster, 'members'>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of c.members ?? []) counts[m.role] = (counts[m.role] ?? 0) + 1;
  return counts;
}
