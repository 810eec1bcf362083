import type { Member } from '@/lib/api/types';

import { StateBadge } from './state-badge';

function size(bytes?: number | null): string {
  return bytes === undefined || bytes === null ? '' : `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

/** Each member: where it runs, its floating IP and DNS name, its whole disks and its service links;
 * with `canOpenTerminal`, a Terminal button for each member it says yes to. */
export function MemberTable({
  members,
  canOpenTerminal,
  onOpenTerminal,
}: {
  members: Member[];
  canOpenTerminal?: (member: Member) => boolean;
  onOpenTerminal?: (memberId: string) => void;
}) {
  const terminals = canOpenTerminal !== undefined && onOpenTerminal !== undefined;
  return (
    <table className="table" aria-label="members">
      <thead>
        <tr>
          <th>Member</th>
          <th>Role</th>
          <th>State</th>
          <th>Node</th>
          <th>Floating IP</th>
          <th>DNS name</th>
          <th>Disks</th>
          <th>Services</th>
          {terminals && <th>Shell</th>}
        </tr>
      </thead>
      <tbody>
        {members.map((m) => (
          <tr key={m.member_id} data-member={m.member_id}>
            <td className="table__mono">{m.member_id}</td>
            <td>{m.role}</td>
            <td>
              <StateBadge state={m.state.replace(/^TASK_/, '')} />
              {m.message && <div className="muted">{m.message}</div>}
              {!!m.replacements && <div className="muted">replaced {m.replacements}× after dying</div>}
            </td>
            <td>{m.node ?? '—'}</td>
            <td className="table__mono" data-testid="member-ip">
              {m.ip ?? '—'}
            </td>
            <td className="table__mono">{m.dns_name ?? '—'}</td>
            <td>
              {m.disks.length === 0
                ? '—'
                : m.disks.map((d) => (
                    <div key={d.container_path} className="table__mono" data-testid="member-disk">
                      {d.container_path}: {d.device_path ?? d.mount_point} {d.disk_class ?? ''} {size(d.size_bytes)}
                    </div>
                  ))}
            </td>
            <td>
              {m.ip
                ? m.ports
                    .filter((p) => p.ui)
                    .map((p) => (
                      <div key={p.name}>
                        <a href={`http://${m.ip}:${p.port}/`} target="_blank" rel="noreferrer">
                          {p.name}
                        </a>
                      </div>
                    ))
                : null}
            </td>
            {terminals && (
              <td>
                {canOpenTerminal(m) && (
                  <button type="button" className="button button--small" aria-label={`Open a terminal in ${m.member_id}`}
                    onClick={() => onOpenTerminal(m.member_id)}>
                    Terminal
                  </button>
                )}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
