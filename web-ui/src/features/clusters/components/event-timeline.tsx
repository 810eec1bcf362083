import type { ClusterEvent } from '../api/types';

/** The per-member, per-step timeline, newest last. */
export function EventTimeline({ events }: { events: ClusterEvent[] }) {
  return (
    <ol className="timeline" aria-label="timeline">
      {events.map((e) => (
        <li key={e.seq}>
          <span className="table__mono">{new Date(e.at + 'Z').toLocaleTimeString()}</span> <strong>{e.member_id ?? 'cluster'}</strong>{' '}
          {e.step} → {e.state} <span className="muted">{e.message}</span>
        </li>
      ))}
    </ol>
  );
}
