import type { ClusterEvent } from '@/lib/api/types';

import { parseTimestamp } from '../lib/cluster';

/** The per-member, per-step timeline, newest last. */
export function EventTimeline({ events }: { events: ClusterEvent[] }) {
  return (
    <ol className="timeline" aria-label="timeline">
      {events.map((e) => (
        <li key={e.seq}>
          <span className="table__mono">{parseTimestamp(e.at).toLocaleTimeString()}</span> <strong>{e.member_id ?? 'cluster'}</strong>{' '}
          {e.step} → {e.state} <span className="muted">{e.message}</span>
        </li>
      ))}
    </ol>
  );
}
