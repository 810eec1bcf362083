import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import { PlacementPreview } from '@/features/catalog/components/placement-preview';
import { ApiError } from '@/lib/api-client';
import type { Cluster } from '@/lib/api/types';

import { deleteCluster, planResize, resizeCluster, startCluster, stopCluster } from '../api/clusters';
import { clusterQueryKey } from '../hooks/use-live-cluster';
import { roleCounts, type ClusterAddress } from '../lib/cluster';

const RUNNING_STATES = new Set(['RUNNING', 'DEGRADED', 'RESIZING']);

/** What the owner can do with a cluster: stop or start it, resize it (with a placement preview of
 * what it adds), and delete it (keeping its disks as a dataset, or not; with force when other
 * clusters are bound to it). Each answer replaces the
 * cluster shown; its event stream tells the rest. */
export function ClusterActions({ cluster, address, onDeleted }: { cluster: Cluster; address: ClusterAddress; onDeleted: () => void }) {
  const queryClient = useQueryClient();
  const show = (updated: Cluster) => queryClient.setQueryData<Cluster>(clusterQueryKey(address), updated);
  const stop = useMutation({ mutationFn: () => stopCluster(address), onSuccess: show });
  const start = useMutation({ mutationFn: () => startCluster(address), onSuccess: show });
  const [confirming, setConfirming] = useState(false);
  const [keep, setKeep] = useState(false);
  const [dataset, setDataset] = useState('');
  const remove = useMutation({
    mutationFn: (force: boolean) => deleteCluster(address, keep ? { dataset: dataset.trim() || undefined } : undefined, force),
    onSuccess: (updated) => {
      setConfirming(false);
      show(updated);
      onDeleted();
    },
  });
  // Other clusters of the owner are bound to it: the answer names them; a second, forced delete goes on.
  const inUse = remove.error instanceof ApiError && remove.error.code === 'CLUSTER_IN_USE';
  const state = cluster.state;
  if (state === 'DESTROYED' || state === 'DESTROYING') return null;
  return (
    <>
      <div className="form__actions" aria-label="cluster actions">
        {RUNNING_STATES.has(state) && (
          <button type="button" className="button" disabled={stop.isPending} onClick={() => stop.mutate()}>
            Stop cluster
          </button>
        )}
        {(state === 'STOPPED' || state === 'STOPPING') && (
          <button type="button" className="button button--primary" disabled={start.isPending} onClick={() => start.mutate()}>
            Start cluster
          </button>
        )}
        {!confirming ? (
          <button type="button" className="button button--danger" onClick={() => setConfirming(true)}>
            Delete cluster
          </button>
        ) : (
          <div role="alertdialog" aria-label="confirm delete" className="alert alert--warning">
            <p>
              Delete {cluster.id}? Its containers stop and its IPs are freed;{' '}
              {keep ? 'its disks are kept, with their data, as your dataset.' : 'its disks are wiped.'}
            </p>
            <label>
              <input type="checkbox" checked={keep} onChange={(e) => setKeep(e.target.checked)} /> Keep its disks as a dataset
            </label>
            {keep && (
              <label>
                {' '}
                named <input value={dataset} placeholder={cluster.id} onChange={(e) => setDataset(e.target.value)} aria-label="dataset name" />
              </label>
            )}
            <button type="button" className="button button--danger" disabled={remove.isPending} onClick={() => remove.mutate(false)}>
              Yes, delete it
            </button>
            {inUse && (
              <button type="button" className="button button--danger" disabled={remove.isPending} onClick={() => remove.mutate(true)}>
                Delete anyway (the clusters bound to it run on without it)
              </button>
            )}
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        )}
        {stop.isError && <ErrorAlert title="The stop was refused" error={stop.error} />}
        {start.isError && <ErrorAlert title="The start was refused" error={start.error} />}
        {remove.isError && <ErrorAlert title="The delete was refused" error={remove.error} />}
      </div>
      {RUNNING_STATES.has(state) && <ResizeForm cluster={cluster} address={address} onResized={show} />}
    </>
  );
}

/** A count per role, a preview of where added members would go, then the resize itself. */
function ResizeForm({ cluster, address, onResized }: { cluster: Cluster; address: ClusterAddress; onResized: (c: Cluster) => void }) {
  const current = roleCounts(cluster);
  const [counts, setCounts] = useState<Record<string, number>>(current);
  const changed = Object.fromEntries(Object.entries(counts).filter(([role, n]) => n !== current[role]));
  const plan = useMutation({ mutationFn: () => planResize(address, changed) });
  const resize = useMutation({ mutationFn: () => resizeCluster(address, changed), onSuccess: onResized });
  return (
    <fieldset className="form__fieldset" aria-label="resize">
      <legend>Resize</legend>
      {Object.keys(current)
        .sort()
        .map((role) => (
          <label key={role}>
            {role}{' '}
            <input
              type="number"
              min={0}
              value={counts[role] ?? 0}
              aria-label={`${role} count`}
              onChange={(e) => {
                setCounts({ ...counts, [role]: Number(e.target.value) });
                plan.reset();
              }}
            />
          </label>
        ))}
      <button type="button" className="button button--small" disabled={Object.keys(changed).length === 0 || plan.isPending} onClick={() => plan.mutate()}>
        Preview
      </button>
      <button type="button" className="button button--small button--primary" disabled={!plan.data?.placeable || resize.isPending} onClick={() => resize.mutate()}>
        Resize
      </button>
      {plan.data && <PlacementPreview plan={plan.data} />}
      {plan.isError && <ErrorAlert title="The preview was refused" error={plan.error} />}
      {resize.isError && <ErrorAlert title="The resize was refused" error={resize.error} />}
    </fieldset>
  );
}
