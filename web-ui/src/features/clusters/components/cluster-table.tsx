import { Link } from 'react-router';

import { clusterPagePath } from '@/config/paths';
import type { Cluster } from '@/lib/api/types';

import { parseTimestamp } from '../lib/cluster';
import { StateBadge } from './state-badge';

/** Clusters as rows linking to their detail pages. */
export function ClusterTable({ clusters, showOwner = false }: { clusters: Cluster[]; showOwner?: boolean }) {
  return (
    <table className="table" aria-label="clusters">
      <thead>
        <tr>
          <th>Cluster</th>
          {showOwner && <th>Owner</th>}
          <th>Product</th>
          <th>State</th>
          <th>Members</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {clusters.map((c) => (
          <tr key={c.id}>
            <td>
              <Link to={clusterPagePath(c)} className="table__mono">
                {c.id}
              </Link>
            </td>
            {showOwner && <td>{c.owner}</td>}
            <td>
              {c.product} {c.version}
            </td>
            <td>
              <StateBadge state={c.state} />
              {c.reason_code && <span className="muted"> {c.reason_code}</span>}
            </td>
            <td>{c.members.length}</td>
            <td>{parseTimestamp(c.created_at).toLocaleString()}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
