import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';

import { deleteCluster, getCluster } from '../api/clusters';
import { clusterPath, SETTLED_STATES } from '../api/types';
import { useClusterEvents } from '../hooks/use-cluster-events';
import { EventTimeline } from './event-timeline';
import { JobList } from './job-list';
import { MemberTable } from './member-table';
import { StateBadge } from './state-badge';

/** One cluster, live: state, members (node, IP, DNS, disks, links), the timeline, and Delete. */
export function ClusterDetailPage() {
  const { owner = '', product = '', version = '', id = '' } = useParams();
  const address = { owner, product, version, id };
  const path = clusterPath(address);
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => deleteCluster(address),
    onSuccess: (updated) => {
      setConfirming(false);
      queryClient.setQueryData(['cluster', path], updated);
    },
  });
  // A deleted cluster may still read RUNNING for a moment: follow it until it is DESTROYED.
  const isSettled = (state?: string) =>
    remove.isSuccess ? state === 'DESTROYED' : SETTLED_STATES.includes(state ?? '');
  const cluster = useQuery({
    queryKey: ['cluster', path],
    queryFn: () => getCluster(address),
    refetchInterval: (query) => (isSettled(query.state.data?.state) ? false : 1000),
  });
  const settled = isSettled(cluster.data?.state);
  const timeline = useClusterEvents(address, settled);

  if (cluster.isPending) return <LoadingState label="Loading the cluster…" />;
  if (cluster.isError) return <ErrorAlert title="Could not load the cluster" error={cluster.error} />;
  const c = cluster.data;
  return (
    <section className="page">
      <h1>
        {c.product} {c.version} <span className="table__mono">{c.id}</span>
      </h1>
      <p>
        State: <span data-testid="cluster-state">{c.state}</span> <StateBadge state={c.state} />
        {!settled && <span className="loading-state__spinner" aria-hidden="true" />}
      </p>
      {c.reason_code && (
        <div className="alert alert--danger" role="alert">
          <p className="alert__title">{c.reason_code}</p>
          <p>{c.reason}</p>
        </div>
      )}
      <MemberTable members={c.members} />
      {c.state !== 'DESTROYED' && c.state !== 'DESTROYING' && (
        <div className="form__actions">
          {!confirming ? (
            <button type="button" className="button button--danger" onClick={() => setConfirming(true)}>
              Delete cluster
            </button>
          ) : (
            <div role="alertdialog" aria-label="confirm delete" className="alert alert--warning">
              <p>Delete {c.id}? Its containers stop, its disks are wiped and its IPs freed.</p>
              <button type="button" className="button button--danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
                Yes, delete it
              </button>
              <button type="button" className="button" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </div>
          )}
        </div>
      )}
      {remove.isError && <ErrorAlert title="The delete was refused" error={remove.error} />}
      <h2>Jobs</h2>
      <JobList address={address} />
      <h2>Timeline</h2>
      {timeline.error && <ErrorAlert title="The live timeline stopped" error={timeline.error} />}
      <EventTimeline events={timeline.events} />
    </section>
  );
}
