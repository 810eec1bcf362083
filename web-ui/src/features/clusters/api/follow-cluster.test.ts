import { afterEach, describe, expect, it, vi } from 'vitest';

import { ApiError } from '@/lib/api-client';
import type { Cluster, ClusterEvent } from '@/lib/api/types';
import { aCluster, anEvent } from '@/testing/clusters';
import { jsonResponse } from '@/testing/json-response';
import { sseResponse, type SseStream } from '@/testing/sse-response';

import { isSettled } from '../lib/cluster';
import { followCluster, type FollowOptions } from './follow-cluster';

const ADDRESS = { owner: 'ann', product: 'static-web', version: '1.0', id: 'c-1' };

type Opened = { url: string; headers: Headers; stream: SseStream };

/** Stubs fetch: each call opens a new SSE stream (or returns `refuse` when given) and is recorded. */
function stubStreams(refuse?: () => Response) {
  const opened: Opened[] = [];
  const waiting: ((o: Opened) => void)[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn((url: string, init: RequestInit) => {
      if (refuse) return Promise.resolve(refuse());
      const stream = sseResponse(init.signal);
      const o = { url, headers: new Headers(init.headers), stream };
      opened.push(o);
      waiting.shift()?.(o);
      return Promise.resolve(stream.response);
    }),
  );
  /** The nth stream opened (1-based), once it is. */
  const nth = (n: number) =>
    opened.length >= n ? Promise.resolve(opened[n - 1]!) : new Promise<Opened>((resolve) => waiting.push(resolve));
  return { opened, nth };
}

function follow(overrides: Partial<FollowOptions> = {}) {
  const seen: ClusterEvent[] = [];
  const ends: (Cluster | null)[] = [];
  const errors: [Error, boolean][] = [];
  const abort = new AbortController();
  const done = followCluster(ADDRESS, {
    afterSeq: 0,
    isDone: (c) => isSettled(c.state),
    onEvent: (e) => seen.push(e),
    onEnd: (c) => ends.push(c),
    onError: (e, retrying) => errors.push([e, retrying]),
    signal: abort.signal,
    retryDelay: () => 0,
    ...overrides,
  });
  return { seen, ends, errors, abort, done };
}

afterEach(() => vi.unstubAllGlobals());

describe('followCluster', () => {
  it('passes each event on, then the settled cluster of the end, over one stream', async () => {
    const { opened, nth } = stubStreams();
    const f = follow();
    const first = await nth(1);
    expect(first.url).toBe('/clusters/ann/static-web/1.0/c-1/events?stream=true&after_seq=0');
    expect(first.headers.get('Accept')).toBe('text/event-stream');
    expect(first.headers.has('Last-Event-ID')).toBe(false);

    first.stream.send('event', anEvent(1, 'PENDING'), 1);
    first.stream.comment();
    first.stream.send('event', anEvent(2, 'RUNNING'), 2);
    first.stream.send('end', aCluster({ state: 'RUNNING' }));
    first.stream.close();
    await f.done;

    expect(f.seen.map((e) => e.seq)).toEqual([1, 2]);
    expect(f.ends.map((c) => c?.state)).toEqual(['RUNNING']);
    expect(f.errors).toEqual([]);
    expect(opened).toHaveLength(1);
  });

  it('opens a dropped stream again after the last event seen (Last-Event-ID), skipping repeats', async () => {
    const { opened, nth } = stubStreams();
    const f = follow();
    const first = await nth(1);
    first.stream.send('event', anEvent(1, 'PENDING'), 1);
    first.stream.send('event', anEvent(2, 'DEPLOYING'), 2);
    first.stream.close(); // dropped: no end

    const second = await nth(2);
    expect(second.headers.get('Last-Event-ID')).toBe('2');
    expect(second.url).toContain('after_seq=2');
    second.stream.send('event', anEvent(2, 'DEPLOYING'), 2); // a repeat
    second.stream.send('event', anEvent(3, 'RUNNING'), 3);
    second.stream.send('end', aCluster({ state: 'RUNNING' }));
    second.stream.close();
    await f.done;

    expect(f.seen.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(opened).toHaveLength(2);
  });

  it('follows a state it does not know (a newer server’s) like any unsettled one', async () => {
    const { nth } = stubStreams();
    const f = follow();
    const first = await nth(1);
    first.stream.send('event', anEvent(1, 'DEGRADED'), 1);
    first.stream.send('end', aCluster({ state: 'SOMETHING_NEW' as Cluster['state'] }));
    first.stream.close();

    const second = await nth(2); // not settled: opened again
    second.stream.send('end', aCluster({ state: 'RUNNING' }));
    second.stream.close();
    await f.done;
    expect(f.ends.map((c) => c?.state)).toEqual(['SOMETHING_NEW', 'RUNNING']);
  });

  it('after a delete, waits through an end on RUNNING until DESTROYED', async () => {
    const { opened, nth } = stubStreams();
    const f = follow({ isDone: (c) => isSettled(c.state, true) });
    const first = await nth(1);
    first.stream.send('event', anEvent(7, 'DELETE_REQUESTED'), 7);
    first.stream.send('end', aCluster({ state: 'RUNNING' }));
    first.stream.close();

    const second = await nth(2);
    expect(second.headers.get('Last-Event-ID')).toBe('7');
    second.stream.send('event', anEvent(8, 'DESTROYING'), 8);
    second.stream.send('event', anEvent(9, 'DESTROYED'), 9);
    second.stream.send('end', aCluster({ state: 'DESTROYED' }));
    second.stream.close();
    await f.done;
    expect(f.ends.map((c) => c?.state)).toEqual(['RUNNING', 'DESTROYED']);
    expect(opened).toHaveLength(2);
  });

  it('reports an upstream failure in the stream and opens it again', async () => {
    const { nth } = stubStreams();
    const f = follow();
    const first = await nth(1);
    first.stream.send('error', { status: 503 });
    const second = await nth(2);
    expect(f.errors).toHaveLength(1);
    expect(f.errors[0]![0]).toMatchObject({ status: 503, code: 'STREAM_FAILED' });
    expect(f.errors[0]![1]).toBe(true);
    second.stream.send('end', aCluster({ state: 'FAILED' }));
    second.stream.close();
    await f.done;
  });

  it('stops when the API refuses the stream (e.g. the cluster is not visible)', async () => {
    const refused = { error: { code: 'CLUSTER_NOT_FOUND', message: 'ann has no cluster c-1', details: {} } };
    stubStreams(() => jsonResponse(refused, 404));
    const f = follow();
    await f.done;
    expect(f.errors).toHaveLength(1);
    const [error, retrying] = f.errors[0]!;
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('CLUSTER_NOT_FOUND');
    expect(retrying).toBe(false);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('stops at once when aborted', async () => {
    const { nth } = stubStreams();
    const f = follow();
    await nth(1);
    f.abort.abort();
    await f.done;
    expect(f.errors).toEqual([]);
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
