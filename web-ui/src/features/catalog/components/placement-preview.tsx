import type { Plan } from '@/lib/api/types';


/** Where each member would go, or why the launch does not fit now. */
export function PlacementPreview({ plan }: { plan: Plan }) {
  if (!plan.placeable) {
    return (
      <div className="alert alert--warning" role="status" aria-label="placement preview">
        <p className="alert__title">It does not fit now</p>
        <p>{plan.summary}</p>
        <ul>
          {plan.reasons.map((r) => (
            <li key={r.member_id}>
              {r.member_id}: {r.nodes.map((n) => `${n.node} — ${n.message}`).join('; ')}
            </li>
          ))}
        </ul>
      </div>
    );
  }
  return (
    <div className="alert alert--success" role="status" aria-label="placement preview">
      <p className="alert__title">{plan.summary}</p>
      <table className="table">
        <thead>
          <tr>
            <th>Member</th>
            <th>Node</th>
            <th>Disks</th>
          </tr>
        </thead>
        <tbody>
          {plan.members.map((m) => (
            <tr key={m.member_id}>
              <td>{m.member_id}</td>
              <td>{m.node}</td>
              <td className="table__mono">{m.disks.join(', ') || '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
