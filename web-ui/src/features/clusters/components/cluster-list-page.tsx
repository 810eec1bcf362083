import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';

import { EmptyState } from '@/components/ui/empty-state';
import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { paths } from '@/config/paths';
import { useMe } from '@/features/auth/hooks/use-me';
import { DatasetList } from '@/features/datasets/components/dataset-list';
import { QuotaPanel } from '@/features/quotas/components/quota-panel';
import { CLUSTER_STATES } from '@/lib/api/types';

import { listAllClusters, listClusters, type ClusterFilters } from '../api/clusters';
import { ClusterTable } from './cluster-table';

/** Your clusters (or, with `everyone`, all users' clusters for admins), filtered by state and product.
 * Fetched when the page opens, the filters change or the window regains focus, and on Refresh;
 * never on a timer (a cluster's own page follows it live over its event stream). */
export function ClusterListPage({ everyone = false }: { everyone?: boolean }) {
  const me = useMe();
  const [filters, setFilters] = useState<ClusterFilters>({});
  const username = me.data?.username ?? '';
  const clusters = useQuery({
    queryKey: ['clusters', everyone ? '*' : username, filters],
    queryFn: () => (everyone ? listAllClusters(filters) : listClusters(username, filters)),
    enabled: everyone || username !== '',
  });
  return (
    <section className="page">
      {!everyone && <h1>My clusters</h1>}
      {!everyone && <QuotaPanel />}
      <div className="filters" role="group" aria-label="filters">
        <label>
          State{' '}
          <select value={filters.state ?? ''} onChange={(e) => setFilters({ ...filters, state: e.target.value || undefined })}>
            <option value="">any</option>
            {CLUSTER_STATES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Product <input value={filters.product ?? ''} onChange={(e) => setFilters({ ...filters, product: e.target.value || undefined })} />
        </label>
        <button type="button" className="button button--small" disabled={clusters.isFetching} onClick={() => void clusters.refetch()}>
          Refresh
        </button>
      </div>
      {clusters.isPending ? (
        <LoadingState label="Loading clusters…" />
      ) : clusters.isError ? (
        <ErrorAlert title="Could not load the clusters" error={clusters.error} onRetry={() => void clusters.refetch()} />
      ) : clusters.data.items.length === 0 ? (
        <EmptyState title="No clusters here">
          {filters.state || filters.product ? 'No cluster matches the filters. ' : ''}
          Launch one from the <Link to={paths.catalog.path}>catalog</Link>.
        </EmptyState>
      ) : (
        <ClusterTable clusters={clusters.data.items} showOwner={everyone} />
      )}
      {clusters.data?.next_page_token && (
        <button type="button" className="button" onClick={() => setFilters({ ...filters, pageToken: clusters.data.next_page_token ?? undefined })}>
          Next page
        </button>
      )}
      {!everyone && (
        <>
          <h2>My datasets</h2>
          <DatasetList username={username} />
        </>
      )}
    </section>
  );
}
