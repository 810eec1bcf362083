import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Cluster } from '@/lib/api/types';
import { aCluster, anEvent } from '@/testing/clusters';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';
import { sseResponse, type SseStream } from '@/testing/sse-response';

import { ClusterDetailPage } from './cluster-detail-page';

const PATH = '/clusters/ann/static-web/1.0/c-1';

/** The API as the page sees it: the cluster (answers from `clusters`, the last one repeating),
 * its jobs, a delete, and an SSE stream per request to …/events. */
function stubApi(clusters: Cluster[]) {
  const gets: string[] = [];
  const streams: { url: string; headers: Headers; stream: SseStream }[] = [];
  let deleted: Cluster | undefined;
  vi.stubGlobal(
    'fetch',
    vi.fn((url: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (url.startsWith(`${PATH}/events`)) {
        const stream = sseResponse(init.signal);
        streams.push({ url, headers, stream });
        return Promise.resolve(stream.response);
      }
      if (url === `${PATH}/jobs`) return Promise.resolve(jsonResponse([]));
      if (url === PATH && init.method === 'DELETE') return Promise.resolve(jsonResponse((deleted = clusters.at(-1)!), 202));
      if (url === PATH) {
        gets.push(url);
        return Promise.resolve(jsonResponse(clusters[Math.min(gets.length, clusters.length) - 1]));
      }
      return Promise.resolve(jsonResponse({ error: { code: 'NOT_FOUND', message: url, details: {} } }, 404));
    }),
  );
  const stream = async (n: number) => {
    await waitFor(() => expect(streams.length).toBeGreaterThanOrEqual(n));
    return streams[n - 1]!;
  };
  return { gets, streams, stream, wasDeleted: () => deleted !== undefined };
}

function renderPage() {
  return renderWithProviders(
    <MemoryRouter initialEntries={[`/clusters/ann/static-web/1.0/c-1`]}>
      <Routes>
        <Route path="/clusters/:owner/:product/:version/:id" element={<ClusterDetailPage />} />
      </Routes>
    </MemoryRouter>,
  );
}

const state = () => screen.getByTestId('cluster-state').textContent;
const sleep = (ms: number) => act(() => new Promise((resolve) => setTimeout(resolve, ms)));

afterEach(() => vi.unstubAllGlobals());

describe('ClusterDetailPage', () => {
  it('fetches the cluster once, then refreshes it from its event stream alone', async () => {
    const running = aCluster({ state: 'RUNNING', members: [{ ...aCluster().members[0]!, state: 'TASK_RUNNING' }] });
    const api = stubApi([aCluster(), aCluster({ state: 'CONFIGURING' }), running, aCluster({ state: 'DEGRADED' })]);
    renderPage();
    await waitFor(() => expect(state()).toBe('DEPLOYING'));
    const { url, headers, stream } = await api.stream(1);
    expect(url).toBe(`${PATH}/events?stream=true&after_seq=0&follow=true`);
    expect(headers.get('Accept')).toBe('text/event-stream');
    expect(api.gets).toHaveLength(1);

    // Each event joins the timeline and refetches the cluster (a burst: one refetch).
    stream.send('event', anEvent(1, 'DEPLOYING'), 1);
    stream.send('event', anEvent(2, 'CONFIGURING'), 2);
    await waitFor(() => expect(state()).toBe('CONFIGURING'));
    expect(api.gets).toHaveLength(2);
    expect(within(screen.getByRole('list', { name: 'timeline' })).getAllByRole('listitem')).toHaveLength(2);

    stream.send('event', anEvent(3, 'RUNNING'), 3);
    await waitFor(() => expect(state()).toBe('RUNNING'));
    expect(screen.getByRole('table', { name: 'members' })).toHaveTextContent('RUNNING');

    // RUNNING: nothing is fetched on a timer (the page used to poll every second); the stream
    // stays open, so a later change still arrives.
    await sleep(1500);
    expect(api.gets).toHaveLength(3);
    stream.send('event', anEvent(4, 'DEGRADED'), 4);
    await waitFor(() => expect(state()).toBe('DEGRADED'));

    // The end (the cluster destroyed) gives the cluster itself: no request for it, no new stream.
    stream.send('end', aCluster({ state: 'DESTROYED', members: [] }));
    stream.close();
    await waitFor(() => expect(state()).toBe('DESTROYED'));
    await sleep(1500);
    expect(api.gets).toHaveLength(4);
    expect(api.streams).toHaveLength(1);
  });

  it('opens a dropped stream again after the last event (Last-Event-ID) until the cluster is destroyed', async () => {
    const api = stubApi([aCluster()]);
    renderPage();
    const first = await api.stream(1);
    first.stream.send('event', anEvent(4, 'DEPLOYING'), 4);
    await screen.findByText(/now DEPLOYING/);
    first.stream.close(); // the connection drops before the end

    const second = await waitFor(() => api.stream(2));
    expect(second.headers.get('Last-Event-ID')).toBe('4');
    expect(second.url).toContain('after_seq=4');
    expect(api.gets).toHaveLength(2); // the first fetch, and one refetch for event 4
    second.stream.send('event', anEvent(5, 'DESTROYED'), 5);
    second.stream.send('end', aCluster({ state: 'DESTROYED' }));
    second.stream.close();
    await waitFor(() => expect(state()).toBe('DESTROYED'));
    expect(within(screen.getByRole('list', { name: 'timeline' })).getAllByRole('listitem')).toHaveLength(2);
  });

  it('shows a state it does not know and keeps following the cluster', async () => {
    const api = stubApi([aCluster({ state: 'DEGRADED' }), aCluster({ state: 'REBALANCING' as Cluster['state'] })]);
    renderPage();
    await waitFor(() => expect(state()).toBe('DEGRADED'));
    const { stream } = await api.stream(1);
    stream.send('event', anEvent(1, 'REBALANCING'), 1);
    await waitFor(() => expect(state()).toBe('REBALANCING'));
    expect(screen.getAllByText('REBALANCING').length).toBeGreaterThan(0); // the badge, neutral-coloured by default
    stream.send('end', aCluster({ state: 'DESTROYED' }));
    stream.close();
    await waitFor(() => expect(state()).toBe('DESTROYED'));
  });

  it('shows what the owner should know that the state does not say (a binding gone)', async () => {
    const message = 'bind.hdfs: cluster c-9 was deleted (force); this cluster runs on without it';
    stubApi([aCluster({ state: 'RUNNING', notices: [{ code: 'BINDING_GONE', message, at: '2026-11-28T10:00:00Z' }] })]);
    renderPage();
    const notice = await screen.findByRole('status', { name: 'notice' });
    expect(notice.textContent).toBe(`BINDING_GONE${message}`);
  });

  it('after Delete, the open stream shows the cluster going until it is DESTROYED', async () => {
    const api = stubApi([aCluster({ state: 'RUNNING' })]);
    renderPage();
    const first = await api.stream(1);
    first.stream.send('event', anEvent(1, 'RUNNING'), 1);
    await waitFor(() => expect(state()).toBe('RUNNING'));

    fireEvent.click(screen.getByRole('button', { name: 'Delete cluster' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete it' }));
    await waitFor(() => expect(api.wasDeleted()).toBe(true));

    first.stream.send('event', anEvent(2, 'DESTROYING'), 2);
    first.stream.send('event', anEvent(3, 'DESTROYED'), 3);
    first.stream.send('end', aCluster({ state: 'DESTROYED', members: [] }));
    first.stream.close();
    await waitFor(() => expect(state()).toBe('DESTROYED'));
    expect(screen.queryByRole('button', { name: 'Delete cluster' })).toBeNull();
  });
});
