import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';

import type { Cluster, ClusterEvent } from '@/lib/api/types';

import { getCluster } from '../api/clusters';
import { followCluster } from '../api/follow-cluster';
import { clusterPath, isSettled, type ClusterAddress } from '../lib/cluster';

/** Coalesces the refetches a burst of events asks for (e.g. the timeline replayed on connect). */
const REFRESH_DELAY_MS = 100;

export function clusterQueryKey(address: ClusterAddress) {
  return ['cluster', clusterPath(address)] as const;
}

/** A cluster and its timeline, live, refreshed by its SSE stream alone: the cluster is fetched
 * once; then each `event` of the stream joins the timeline and refetches the cluster (members'
 * states, IPs, disks; jobs on job events), and `end` gives the cluster itself. No refetching on a
 * timer or on focus. The stream follows the cluster until it is DESTROYED (a settled cluster may
 * still change: a member replaced, a job run), and is opened again after the last event seen
 * (Last-Event-ID) when it drops. */
export function useLiveCluster(address: ClusterAddress, deleting = false) {
  const queryClient = useQueryClient();
  const { owner, product, version, id } = address;
  const cluster = useQuery({
    queryKey: clusterQueryKey(address),
    queryFn: () => getCluster({ owner, product, version, id }),
    staleTime: Infinity,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
  });
  const [events, setEvents] = useState<ClusterEvent[]>([]);
  // The stream's last failure, and whether it is being opened again.
  const [error, setError] = useState<{ error: Error; retrying: boolean } | null>(null);
  const lastSeq = useRef(0);
  const loaded = cluster.isSuccess;

  useEffect(() => {
    if (!loaded) return;
    const address = { owner, product, version, id };
    const key = clusterQueryKey(address);
    const abort = new AbortController();
    let refresh: ReturnType<typeof setTimeout> | undefined;
    const refetchSoon = () => {
      refresh ??= setTimeout(() => {
        refresh = undefined;
        void queryClient.invalidateQueries({ queryKey: key, exact: true });
      }, REFRESH_DELAY_MS);
    };
    void followCluster(address, {
      afterSeq: lastSeq.current,
      isDone: (c) => c.state === 'DESTROYED',
      follow: true,
      onEvent: (event) => {
        lastSeq.current = Math.max(lastSeq.current, event.seq);
        setError(null);
        setEvents((seen) => (seen.some((e) => e.seq === event.seq) ? seen : [...seen, event]));
        if (event.step === 'job') {
          void queryClient.invalidateQueries({ queryKey: ['jobs', id] });
          void queryClient.invalidateQueries({ queryKey: ['job', id] });
        }
        refetchSoon();
      },
      onEnd: (settled) => {
        clearTimeout(refresh);
        refresh = undefined;
        setError(null);
        if (settled === null) {
          void queryClient.invalidateQueries({ queryKey: key, exact: true }); // gone: the page shows why
          return;
        }
        // The end carries the cluster as it settled: nothing to fetch, and a refetch still under way
        // (an older answer) is cancelled first, so it cannot replace it.
        void queryClient
          .cancelQueries({ queryKey: key, exact: true })
          .then(() => queryClient.setQueryData<Cluster>(key, settled));
      },
      onError: (cause, retrying) => setError({ error: cause, retrying }),
      signal: abort.signal,
    });
    return () => {
      abort.abort();
      clearTimeout(refresh);
    };
  }, [owner, product, version, id, loaded, queryClient]);

  return { cluster, events, streamError: error, settled: isSettled(cluster.data?.state, deleting) };
}
