import { EmptyState } from '@/components/ui/empty-state';
import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';

import { usePlatformStatus } from '../hooks/use-platform-status';
import { ServiceStatusTable } from './service-status-table';

function PlatformStatusContent() {
  const { data, error, isPending, refetch } = usePlatformStatus();
  if (isPending) return <LoadingState label="Checking the platform's services…" />;
  if (error) {
    return <ErrorAlert title="Could not load the platform status" error={error} onRetry={() => void refetch()} />;
  }
  if (data.services.length === 0) {
    return (
      <EmptyState title="No services reported">
        <p>
          The API answered with an empty list of services, so there is nothing to check. Run{' '}
          <code>spindle status</code> on the Spindle server to see what Consul reports, and start missing services
          with <code>deploy/up</code> (their logs are in <code>/var/lib/spindle/log</code> by default).
        </p>
      </EmptyState>
    );
  }
  return <ServiceStatusTable services={data.services} />;
}

/** "Platform status": the health of every Spindle service, as Consul sees it. */
export function PlatformStatusPage() {
  return (
    <section>
      <title>Platform status · Spindle</title>
      <h1>Platform status</h1>
      <p className="page__lead">Health of each Spindle service as reported by its Consul checks.</p>
      <PlatformStatusContent />
    </section>
  );
}
