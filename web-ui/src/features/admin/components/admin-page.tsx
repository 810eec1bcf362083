import { useQuery } from '@tanstack/react-query';

import { EmptyState } from '@/components/ui/empty-state';
import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { ClusterListPage } from '@/features/clusters/components/cluster-list-page';
import { DatasetList } from '@/features/datasets/components/dataset-list';
import { QuotaAdmin } from '@/features/quotas/components/quota-admin';

import { getIpPools, getNodes } from '../api/inventory';
import { CapacityCharts } from './capacity-charts';
import { DiskMap } from './disk-map';
import { NodeRack } from './node-rack';

/** Admin: every node's rack (failure domain) and disk map, the IP pools with their usage, users' quotas, and all users' clusters. */
export function AdminPage() {
  const nodes = useQuery({ queryKey: ['nodes'], queryFn: getNodes });
  const pools = useQuery({ queryKey: ['ip-pools'], queryFn: getIpPools, refetchInterval: 5000 });
  return (
    <section className="page">
      <h1>Admin</h1>
      <h2>Capacity over time</h2>
      <CapacityCharts />
      <h2>Nodes and disks</h2>
      {nodes.isPending ? (
        <LoadingState label="Loading nodes…" />
      ) : nodes.isError ? (
        <ErrorAlert title="Could not load the nodes" error={nodes.error} />
      ) : nodes.data.length === 0 ? (
        <EmptyState title="No nodes yet">Register a node with POST /admin/nodes, then discover its disks.</EmptyState>
      ) : (
        nodes.data.map((n) => (
          <div key={n.name}>
            <h3>{n.name}</h3>
            <NodeRack node={n} />
            <DiskMap node={n.name} />
          </div>
        ))
      )}
      <h2>IP pools</h2>
      {pools.isError && <ErrorAlert title="Could not load the IP pools" error={pools.error} />}
      {pools.data && (
        <table className="table" aria-label="IP pools">
          <thead>
            <tr>
              <th>Pool</th>
              <th>Network</th>
              <th>Floating range</th>
              <th>Driver</th>
              <th>In use</th>
            </tr>
          </thead>
          <tbody>
            {pools.data.map((p) => (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td className="table__mono">{p.cidr}</td>
                <td className="table__mono">{p.floating_cidr}</td>
                <td>{p.driver}</td>
                <td>
                  <meter min={0} max={p.floating_total} value={p.floating_used} /> {p.floating_used} of {p.floating_total}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Quotas</h2>
      <QuotaAdmin />
      <h2>Datasets</h2>
      <DatasetList username="" everyone />
      <h2>All clusters</h2>
      <ClusterListPage everyone />
    </section>
  );
}
