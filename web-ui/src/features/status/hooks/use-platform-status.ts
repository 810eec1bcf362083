import { useQuery } from '@tanstack/react-query';

import { getPlatformStatus } from '../api/get-platform-status';

// Health changes on its own, so the page keeps polling while it is open.
const REFRESH_INTERVAL_MS = 10_000;

/** The platform status, refreshed every few seconds. */
export function usePlatformStatus() {
  return useQuery({
    queryKey: ['platform-status'],
    queryFn: getPlatformStatus,
    refetchInterval: REFRESH_INTERVAL_MS,
  });
}
