import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

import type { Quota } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { QuotaPanel } from './quota-panel';

const quota: Quota = {
  username: 'alice',
  defaults: ['clusters', 'cpus', 'mem_mb', 'disks.hdd', 'disks.ssd', 'disks.nvme'],
  limits: { clusters: 10, cpus: 32, mem_mb: 65536, disks: { hdd: 16, ssd: 16, nvme: 16 }, floating_ips: 3 },
  usage: { clusters: 3, cpus: 0.3, mem_mb: 192, disks: { hdd: 0, ssd: 0, nvme: 0 }, floating_ips: 3 },
};

describe('QuotaPanel', () => {
  it('shows your usage against each limit, the defaults and the limits reached', async () => {
    const fetchMock = vi.fn(() => Promise.resolve(jsonResponse(quota)));
    vi.stubGlobal('fetch', fetchMock);

    renderWithProviders(<QuotaPanel />);

    const table = await screen.findByRole('table', { name: 'your quota' });
    expect(fetchMock).toHaveBeenCalledWith('/me/quota', expect.anything());
    const ips = within(table).getByRole('row', { name: /Floating IPs/ });
    expect(ips).toHaveTextContent('3');
    expect(within(ips).getByText('full')).toBeInTheDocument();
    expect(within(ips).queryByText('(default)')).not.toBeInTheDocument();
    const clusters = within(table).getByRole('row', { name: /Clusters/ });
    expect(clusters).toHaveTextContent('10 (default)');
    expect(within(clusters).queryByText('full')).not.toBeInTheDocument();
  });

  it("shows the API's error when the quota cannot be read", async () => {
    vi.stubGlobal('fetch', vi.fn(() => Promise.resolve(jsonResponse(
      { error: { code: 'SERVICE_UNAVAILABLE', message: 'the orchestrator is unreachable', details: {} } }, 503))));

    renderWithProviders(<QuotaPanel />);

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('the orchestrator is unreachable')).toBeInTheDocument();
    expect(within(alert).getByText('SERVICE_UNAVAILABLE')).toBeInTheDocument();
  });
});
