import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';

import { EmptyState } from '@/components/ui/empty-state';
import { ErrorAlert } from '@/components/ui/error-alert';

import { getJob, listJobs } from '../api/clusters';
import type { ClusterAddress } from '../lib/cluster';
import { StateBadge } from './state-badge';

/** The cluster's jobs (driver programs), newest last; a job's logs open below the list. */
export function JobList({ address }: { address: ClusterAddress }) {
  const [shown, setShown] = useState<string | null>(null);
  // Refreshed by the cluster's event stream (its `job` events), not on a timer.
  const jobs = useQuery({ queryKey: ['jobs', address.id], queryFn: () => listJobs(address) });
  const job = useQuery({
    queryKey: ['job', address.id, shown],
    queryFn: () => getJob(address, shown ?? ''),
    enabled: shown !== null,
  });
  if (jobs.isError) return <ErrorAlert title="Could not load the jobs" error={jobs.error} />;
  if (!jobs.data) return null;
  if (jobs.data.length === 0) {
    return <EmptyState title="No jobs yet">Submit a driver program with `spindle submit {address.id} main.py` or POST …/jobs.</EmptyState>;
  }
  return (
    <>
      <table className="table" aria-label="jobs">
        <thead>
          <tr>
            <th>Job</th>
            <th>Main</th>
            <th>State</th>
            <th>Exit</th>
            <th>Message</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {jobs.data.map((j) => (
            <tr key={j.id}>
              <td className="table__mono">{j.id}</td>
              <td className="table__mono">{[j.main, ...j.args].join(' ')}</td>
              <td>
                <StateBadge state={j.state} />
              </td>
              <td>{j.exit_code ?? '—'}</td>
              <td className="muted">{j.message}</td>
              <td>
                <button type="button" className="button button--small" onClick={() => setShown(j.id)}>
                  Logs
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {job.data && (
        <section className="panel" aria-label={`logs of ${job.data.id}`}>
          <h3>stdout</h3>
          <pre className="log">{job.data.stdout || '(empty)'}</pre>
          <h3>stderr</h3>
          <pre className="log">{job.data.stderr || '(empty)'}</pre>
        </section>
      )}
    </>
  );
}
