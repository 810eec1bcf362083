import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import type { Dataset } from '@/lib/api/types';

import { listAllDatasets, listDatasets, reclaimDataset } from '../api/datasets';

/** Disks per class as `hdd:2 ssd:1`. */
export function diskSummary(disks: Record<string, number>): string {
  return (
    Object.entries(disks)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([c, n]) => `${c}:${n}`)
      .join(' ') || '-'
  );
}

/** Datasets (disks deleted clusters kept, with their data): yours, or with `everyone` every user's
 * (admins). A KEPT one can be reclaimed (its disks wiped) after a confirmation. */
export function DatasetList({ username, everyone = false }: { username: string; everyone?: boolean }) {
  const queryClient = useQueryClient();
  const key = ['datasets', everyone ? '*' : username];
  const datasets = useQuery({
    queryKey: key,
    queryFn: () => (everyone ? listAllDatasets() : listDatasets(username)),
    enabled: everyone || username !== '',
  });
  const [confirming, setConfirming] = useState<Dataset | null>(null);
  const reclaim = useMutation({
    mutationFn: (d: Dataset) => reclaimDataset(d.owner, d.name),
    onSuccess: () => {
      setConfirming(null);
      void queryClient.invalidateQueries({ queryKey: key });
    },
  });
  if (datasets.isPending) return <LoadingState label="Loading datasets…" />;
  if (datasets.isError) return <ErrorAlert title="Could not load the datasets" error={datasets.error} />;
  if (datasets.data.length === 0) return <p>No datasets: delete a cluster keeping its disks to make one.</p>;
  return (
    <>
      <table className="table" aria-label="datasets">
        <thead>
          <tr>
            <th>Dataset</th>
            {everyone && <th>Owner</th>}
            <th>State</th>
            <th>Product</th>
            <th>Disks</th>
            <th>From</th>
            <th>Attached to</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {datasets.data.map((d) => (
            <tr key={d.id}>
              <td className="table__mono">{d.name}</td>
              {everyone && <td>{d.owner}</td>}
              <td>{d.state}</td>
              <td>
                {d.product} {d.version}
              </td>
              <td>{diskSummary(d.disks)}</td>
              <td className="table__mono">{d.source_cluster}</td>
              <td className="table__mono">{d.attached_to ?? '-'}</td>
              <td>
                {d.state === 'KEPT' && (
                  <button type="button" className="button button--small button--danger" onClick={() => setConfirming(d)}>
                    Reclaim
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {confirming && (
        <div role="alertdialog" aria-label="confirm reclaim" className="alert alert--warning">
          <p>
            Reclaim dataset {confirming.name}? Its {diskSummary(confirming.disks)} disks are wiped: the data is gone.
          </p>
          <button type="button" className="button button--danger" disabled={reclaim.isPending} onClick={() => reclaim.mutate(confirming)}>
            Yes, wipe it
          </button>
          <button type="button" className="button" onClick={() => setConfirming(null)}>
            Cancel
          </button>
        </div>
      )}
      {reclaim.isError && <ErrorAlert title="The reclaim was refused" error={reclaim.error} />}
    </>
  );
}
