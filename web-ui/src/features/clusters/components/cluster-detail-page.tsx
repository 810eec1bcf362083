import { useState } from 'react';
import { useParams } from 'react-router';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';

import { useLiveCluster } from '../hooks/use-live-cluster';
import { clusterPath, type ClusterAddress } from '../lib/cluster';
import { canOpenTerminal } from '../lib/terminal';
import { ClusterActions } from './cluster-actions';
import { EventTimeline } from './event-timeline';
import { JobList } from './job-list';
import { MemberCharts } from './member-charts';
import { MemberLogs } from './member-logs';
import { MemberTable } from './member-table';
import { StateBadge } from './state-badge';
import { TerminalPanel } from './terminal-panel';

/** One cluster, live: state, members (node, IP, DNS, disks, links), the timeline, and what the owner
 * can do with it: stop, start, resize, delete (keeping its disks or not). */
export function ClusterDetailPage() {
  const { owner = '', product = '', version = '', id = '' } = useParams();
  const address = { owner, product, version, id };
  // Another cluster is another page: its timeline starts empty.
  return <LiveClusterPage key={clusterPath(address)} address={address} />;
}

function LiveClusterPage({ address }: { address: ClusterAddress }) {
  const [deleting, setDeleting] = useState(false);
  const [terminal, setTerminal] = useState<string | null>(null); // the member whose terminal is open
  // Refreshed by the cluster's event stream alone; after a delete, followed until DESTROYED.
  const { cluster, events, streamError, settled } = useLiveCluster(address, deleting);

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
      {c.notices.map((n) => (
        <div key={`${n.code}-${n.at}`} className="alert alert--warning" role="status" aria-label="notice">
          <p className="alert__title">{n.code}</p>
          <p>{n.message}</p>
        </div>
      ))}
      <MemberTable members={c.members} canOpenTerminal={(m) => canOpenTerminal(c.state, m)} onOpenTerminal={setTerminal} />
      {terminal && canOpenTerminal(c.state, c.members.find((m) => m.member_id === terminal) ?? {}) && (
        <TerminalPanel address={address} member={terminal} onClose={() => setTerminal(null)} />
      )}
      <ClusterActions cluster={c} address={address} onDeleted={() => setDeleting(true)} />
      {c.state !== 'DESTROYED' && (
        <>
          <h2>Members over time</h2>
          <MemberCharts address={address} />
          <h2>Member logs</h2>
          <MemberLogs address={address} members={c.members} />
        </>
      )}
      <h2>Jobs</h2>
      <JobList address={address} />
      <h2>Timeline</h2>
      {streamError && (
        <ErrorAlert
          title={streamError.retrying ? 'The live timeline dropped; reconnecting…' : 'The live timeline stopped'}
          error={streamError.error}
        />
      )}
      <EventTimeline events={events} />
    </section>
  );
}
