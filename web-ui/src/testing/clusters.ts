import type { Cluster, ClusterEvent } from '@/lib/api/types';

/** A cluster as the API answers it (static-web, one member), with `changes` applied. */
export function aCluster(changes: Partial<Cluster> = {}): Cluster {
  return {
    id: 'c-1',
    owner: 'ann',
    product: 'static-web',
    version: '1.0',
    state: 'DEPLOYING',
    reason_code: null,
    reason: null,
    options: {},
    created_at: '2026-11-23T19:52:40.123456Z',
    updated_at: '2026-11-23T19:52:41Z',
    notices: [],
    members: [
      {
        member_id: 'c-1-server-1',
        role: 'server',
        state: 'TASK_STARTING',
        message: '',
        node: 'node-1',
        ip: '172.31.200.130',
        dns_name: 'c-1-server-1.service.spindle',
        disks: [],
        ports: [{ name: 'http', port: 8000, protocol: 'tcp', ui: true }],
        replacements: 0,
      },
    ],
    ...changes,
  };
}

/** Event number `seq` of the timeline. */
export function anEvent(seq: number, state: string, step = 'cluster', memberId: string | null = null): ClusterEvent {
  return { seq, at: `2026-11-23T19:52:${String(40 + seq).padStart(2, '0')}Z`, member_id: memberId, step, state, message: `now ${state}` };
}
