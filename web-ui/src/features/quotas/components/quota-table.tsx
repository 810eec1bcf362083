import type { Quota } from '@/lib/api/types';

import { quotaRows } from '../lib/quota';

/** A quota's usage against each limit, with a meter; a limit that is the platform's default says so. */
export function QuotaTable({ quota, label }: { quota: Quota; label: string }) {
  return (
    <table className="table" aria-label={label}>
      <thead>
        <tr>
          <th>Limit</th>
          <th>Used</th>
          <th>Quota</th>
        </tr>
      </thead>
      <tbody>
        {quotaRows(quota).map((row) => (
          <tr key={row.name}>
            <th scope="row">{row.label}</th>
            <td>
              <meter min={0} max={Math.max(row.limit, 1)} value={row.used} /> {row.used}
              {row.full && <span className="badge badge--warning"> full</span>}
            </td>
            <td>
              {row.limit}
              {row.isDefault && <span className="muted"> (default)</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
