import { ApiError } from '@/lib/api-client';
import type { Cluster, ClusterEvent } from '@/lib/api/types';
import { readEventStream } from '@/lib/event-stream';

import { clusterPath, type ClusterAddress } from '../lib/cluster';

export type FollowOptions = {
  /** Events after this sequence number (0: the whole timeline). */
  afterSeq: number;
  /** Whether `end`'s cluster is what the page waits for; otherwise the stream is opened again. */
  isDone: (cluster: Cluster) => boolean;
  onEvent: (event: ClusterEvent) => void;
  /** The stream's end: the settled cluster, or null when it no longer exists. */
  onEnd: (cluster: Cluster | null) => void;
  /** The stream failed; with `retrying`, it is opened again after a pause. */
  onError: (error: Error, retrying: boolean) => void;
  signal: AbortSignal;
  /** Keep the stream open after the cluster settles (the server ends it once DESTROYED), so later
   * changes — a member replaced, a job started or ended — keep arriving. */
  follow?: boolean;
  /** Pause before the nth reconnect in a row (ms). */
  retryDelay?: (failures: number) => number;
};

/** 1 s, 2 s, 4 s, … at most 10 s. */
export const defaultRetryDelay = (failures: number) => Math.min(1000 * 2 ** (failures - 1), 10_000);

/** The cluster's timeline over SSE (GET …/events with Accept: text/event-stream): each `event` as
 * it is committed, then `end` with the settled cluster. A stream that drops, fails or ends on a
 * cluster the page does not wait for is opened again after the last event seen (Last-Event-ID),
 * until an `end` is what `isDone` wants, the API refuses the stream (4xx), or `signal` aborts. */
export async function followCluster(address: ClusterAddress, options: FollowOptions): Promise<void> {
  const { isDone, onEvent, onEnd, onError, signal, retryDelay = defaultRetryDelay } = options;
  const path = `${clusterPath(address)}/events`;
  let lastSeq = options.afterSeq;
  let failures = 0;
  while (!signal.aborted) {
    let ended: { cluster: Cluster | null } | undefined;
    try {
      await readEventStream(
        `${path}?stream=true&after_seq=${lastSeq}${options.follow ? '&follow=true' : ''}`,
        (message) => {
          if (message.event === 'event') {
            const event = JSON.parse(message.data) as ClusterEvent;
            if (event.seq <= lastSeq) return; // already seen
            lastSeq = event.seq;
            failures = 0;
            onEvent(event);
          } else if (message.event === 'end') {
            ended = { cluster: JSON.parse(message.data) as Cluster | null };
            onEnd(ended.cluster);
          } else if (message.event === 'error') {
            const { status } = JSON.parse(message.data) as { status?: number };
            throw new ApiError(status ?? 502, 'STREAM_FAILED', `the live timeline failed (upstream HTTP ${status ?? '?'})`);
          }
        },
        signal,
        lastSeq > 0 ? String(lastSeq) : undefined,
      );
      if (ended && (ended.cluster === null || isDone(ended.cluster))) return;
    } catch (cause) {
      if (signal.aborted) return;
      const error = cause instanceof Error ? cause : new Error(String(cause));
      const refused = error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
      onError(error, !refused);
      if (refused) return;
    }
    failures += 1;
    await pause(retryDelay(failures), signal);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
