import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';

import { readEventStream } from '@/lib/event-stream';

import { clusterPath, type Cluster, type ClusterEvent } from '../api/types';

type Address = Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>;

/** The cluster's timeline, live: events arrive over SSE until the cluster settles; each one
 * refreshes the cluster itself, so members' states, IPs and disks follow along. The stream is
 * opened again when `settled` changes (e.g. a settled cluster is being deleted). */
export function useClusterEvents(address: Address, settled: boolean) {
  const [events, setEvents] = useState<ClusterEvent[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const queryClient = useQueryClient();
  const path = clusterPath(address);

  useEffect(() => {
    const abort = new AbortController();
    const refresh = () => void queryClient.invalidateQueries({ queryKey: ['cluster', path] });
    readEventStream(
      `${path}/events?stream=true`,
      (message) => {
        if (message.event === 'event') {
          const event = JSON.parse(message.data) as ClusterEvent;
          setEvents((seen) => (seen.some((e) => e.seq === event.seq) ? seen : [...seen, event]));
        }
        refresh();
      },
      abort.signal,
    ).catch((cause: unknown) => {
      if (!abort.signal.aborted) setError(cause instanceof Error ? cause : new Error(String(cause)));
    });
    return () => abort.abort();
  }, [path, settled, queryClient]);

  return { events, error };
}
