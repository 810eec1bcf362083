import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Cluster, Plan } from '@/lib/api/types';
import { aCluster } from '@/testing/clusters';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { ClusterActions } from './cluster-actions';

const PATH = '/clusters/ann/static-web/1.0/c-1';
const ADDRESS = { owner: 'ann', product: 'static-web', version: '1.0', id: 'c-1' };
const PLACED: Plan = { placeable: true, summary: '1 member placed', reasons: [],
                       members: [{ member_id: 'c-1-server-2', node: 'node-2', disks: ['/d/2'], cpus: [] }] };

/** The API as the actions call it: every request recorded, answered with the cluster (or a plan). */
function stubApi(answer: Cluster) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit = {}) => {
    calls.push({ method: init.method ?? 'GET', url, body: init.body ? JSON.parse(String(init.body)) : undefined });
    return Promise.resolve(jsonResponse(url.endsWith('/resize/plan') ? PLACED : answer, 202));
  }));
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe('ClusterActions', () => {
  it('stops a running cluster and starts a stopped one', async () => {
    const calls = stubApi(aCluster({ state: 'STOPPING' }));
    const view = renderWithProviders(<ClusterActions cluster={aCluster({ state: 'RUNNING' })} address={ADDRESS} onDeleted={() => {}} />);
    expect(screen.queryByRole('button', { name: 'Start cluster' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Stop cluster' }));
    await waitFor(() => expect(calls).toEqual([{ method: 'POST', url: `${PATH}/stop`, body: undefined }]));

    view.unmount();
    renderWithProviders(<ClusterActions cluster={aCluster({ state: 'STOPPED' })} address={ADDRESS} onDeleted={() => {}} />);
    expect(screen.queryByRole('button', { name: 'Stop cluster' })).toBeNull();
    expect(screen.queryByRole('group', { name: 'resize' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Start cluster' }));
    await waitFor(() => expect(calls.at(-1)).toEqual({ method: 'POST', url: `${PATH}/start`, body: undefined }));
  });

  it('previews a resize, then resizes with only the counts that changed', async () => {
    const calls = stubApi(aCluster({ state: 'RESIZING' }));
    renderWithProviders(<ClusterActions cluster={aCluster({ state: 'RUNNING' })} address={ADDRESS} onDeleted={() => {}} />);
    const resize = screen.getByRole('button', { name: 'Resize' });
    expect(resize).toHaveProperty('disabled', true);
    expect(screen.getByRole('button', { name: 'Preview' })).toHaveProperty('disabled', true);
    fireEvent.change(screen.getByLabelText('server count'), { target: { value: '2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Preview' }));
    await screen.findByText(/node-2/);
    expect(calls).toEqual([{ method: 'POST', url: `${PATH}/resize/plan`, body: { roles: { server: 2 } } }]);
    fireEvent.click(resize);
    await waitFor(() => expect(calls.at(-1)).toEqual({ method: 'POST', url: `${PATH}/resize`, body: { roles: { server: 2 } } }));
  });

  it('deletes keeping the disks as a named dataset, or wiping them', async () => {
    const calls = stubApi(aCluster({ state: 'DESTROYING' }));
    const deleted = vi.fn();
    renderWithProviders(<ClusterActions cluster={aCluster({ state: 'STOPPED' })} address={ADDRESS} onDeleted={deleted} />);
    fireEvent.click(screen.getByRole('button', { name: 'Delete cluster' }));
    expect(screen.getByRole('alertdialog', { name: 'confirm delete' }).textContent).toContain('its disks are wiped');
    fireEvent.click(screen.getByRole('checkbox'));
    fireEvent.change(screen.getByLabelText('dataset name'), { target: { value: 'my-data' } });
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete it' }));
    await waitFor(() => expect(deleted).toHaveBeenCalled());
    expect(calls).toEqual([{ method: 'DELETE', url: `${PATH}?keep_disks=true&dataset=my-data`, body: undefined }]);
  });

  it('names the clusters bound to it when the delete is refused, and deletes with force when asked', async () => {
    const calls: { method: string; url: string }[] = [];
    const inUse = { error: { code: 'CLUSTER_IN_USE', message: 'cluster c-1 is bound by c-2 (spark, bind.hdfs)',
                             details: { bound_by: [{ cluster_id: 'c-2', product: 'spark', binding: 'hdfs' }] } } };
    vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit = {}) => {
      calls.push({ method: init.method ?? 'GET', url });
      return Promise.resolve(url.includes('force=true') ? jsonResponse(aCluster({ state: 'DESTROYING' }), 202) : jsonResponse(inUse, 409));
    }));
    const deleted = vi.fn();
    renderWithProviders(<ClusterActions cluster={aCluster({ state: 'RUNNING' })} address={ADDRESS} onDeleted={deleted} />);
    fireEvent.click(screen.getByRole('button', { name: 'Delete cluster' }));
    expect(screen.queryByRole('button', { name: /Delete anyway/ })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Yes, delete it' }));
    await screen.findByText(/bound by c-2 \(spark, bind.hdfs\)/);
    expect(deleted).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: /Delete anyway/ }));
    await waitFor(() => expect(deleted).toHaveBeenCalled());
    expect(calls).toEqual([{ method: 'DELETE', url: PATH }, { method: 'DELETE', url: `${PATH}?force=true` }]);
  });

  it('offers nothing for a cluster being destroyed', () => {
    stubApi(aCluster());
    const { container } = renderWithProviders(<ClusterActions cluster={aCluster({ state: 'DESTROYING' })} address={ADDRESS} onDeleted={() => {}} />);
    expect(container.textContent).toBe('');
  });
});
