import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

import type { Quota } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { QuotaAdmin } from './quota-admin';

const ALL_DEFAULTS = ['clusters', 'cpus', 'mem_mb', 'floating_ips', 'disks.hdd', 'disks.ssd', 'disks.nvme'];

function bobQuota(floatingIps: number, defaults: string[]): Quota {
  return {
    username: 'bob',
    defaults,
    limits: { clusters: 10, cpus: 32, mem_mb: 65536, disks: { hdd: 16, ssd: 16, nvme: 16 }, floating_ips: floatingIps },
    usage: { clusters: 1, cpus: 0.5, mem_mb: 128, disks: { hdd: 1, ssd: 0, nvme: 0 }, floating_ips: 1 },
  };
}

type Call = { url: string; method: string; body?: unknown };

function stubApi(answers: Record<string, () => Response>) {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit = {}) => {
    const method = init.method ?? 'GET';
    calls.push({ url, method, body: init.body ? JSON.parse(String(init.body)) : undefined });
    const answer = answers[`${method} ${url}`];
    return Promise.resolve(answer ? answer() : jsonResponse({ error: { code: 'NOT_STUBBED', message: url, details: {} } }, 599));
  }));
  return calls;
}

describe('QuotaAdmin', () => {
  it("loads a user's quota, sends the limits set in the form and shows the result", async () => {
    const calls = stubApi({
      'GET /admin/quotas': () => jsonResponse([]),
      'GET /admin/users/bob/quota': () => jsonResponse(bobQuota(32, ALL_DEFAULTS)),
      'PUT /admin/users/bob/quota': () => jsonResponse(bobQuota(3, ALL_DEFAULTS.filter((d) => d !== 'floating_ips'))),
    });

    renderWithProviders(<QuotaAdmin />);
    expect(await screen.findByText("Every user has the platform's default quota.")).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('User'), { target: { value: 'bob' } });
    fireEvent.click(screen.getByRole('button', { name: 'Show quota' }));
    const ips = await screen.findByLabelText('Floating IPs');
    expect(ips).toHaveValue('');
    fireEvent.change(ips, { target: { value: '3' } });
    fireEvent.change(screen.getByLabelText('Disks (ssd)'), { target: { value: '0' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save quota of bob' }));

    expect(await screen.findByRole('status')).toHaveTextContent('Saved.');
    expect(calls.find((c) => c.method === 'PUT')).toEqual({
      url: '/admin/users/bob/quota', method: 'PUT', body: { floating_ips: 3, disks: { ssd: 0 } },
    });
    const table = screen.getByRole('table', { name: 'quota of bob' });
    expect(within(table).getByRole('row', { name: /Floating IPs/ })).toHaveTextContent('3');
  });

  it('refuses a bad limit in the form without calling the API', async () => {
    const calls = stubApi({
      'GET /admin/quotas': () => jsonResponse([bobQuota(3, ALL_DEFAULTS.filter((d) => d !== 'floating_ips'))]),
    });

    renderWithProviders(<QuotaAdmin />);
    fireEvent.click(await screen.findByRole('button', { name: 'bob' }));
    const cpus = screen.getByLabelText('CPUs');
    expect(screen.getByLabelText('Floating IPs')).toHaveValue('3');
    fireEvent.change(cpus, { target: { value: '-2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save quota of bob' }));

    expect(await screen.findByText('a number from 0')).toBeInTheDocument();
    expect(cpus).toHaveAttribute('aria-invalid', 'true');
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([]);
  });

  it("shows the API's refusal of an unknown user", async () => {
    stubApi({
      'GET /admin/quotas': () => jsonResponse([]),
      'GET /admin/users/nobody/quota': () =>
        jsonResponse({ error: { code: 'USER_NOT_FOUND', message: "no user 'nobody'", details: {} } }, 404),
    });

    renderWithProviders(<QuotaAdmin />);
    fireEvent.change(screen.getByLabelText('User'), { target: { value: 'nobody' } });
    fireEvent.click(screen.getByRole('button', { name: 'Show quota' }));

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('USER_NOT_FOUND')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Save quota/ })).not.toBeInTheDocument();
  });
});
