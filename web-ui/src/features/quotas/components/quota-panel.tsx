import { useQuery } from '@tanstack/react-query';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';

import { getMyQuota } from '../api/quotas';
import { QuotaTable } from './quota-table';

/** Your usage against your quota: clusters not destroyed (waiting ones too), their cpus, memory,
 * disks per class and floating IPs. A launch that would pass a limit is refused (QUOTA_EXCEEDED). */
export function QuotaPanel() {
  const quota = useQuery({ queryKey: ['quota', 'me'], queryFn: getMyQuota });
  return (
    <details className="panel" open>
      <summary>Your quota</summary>
      {quota.isPending ? (
        <LoadingState label="Loading your quota…" />
      ) : quota.isError ? (
        <ErrorAlert title="Could not load your quota" error={quota.error} onRetry={() => void quota.refetch()} />
      ) : (
        <QuotaTable quota={quota.data} label="your quota" />
      )}
    </details>
  );
}
