import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Dataset } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { DatasetList, diskSummary } from './dataset-list';

const KEPT: Dataset = {
  id: 'd0123456789', name: 'my-data', owner: 'ann', owner_id: 'u1', product: 'static-web', version: '1.0',
  source_cluster: 'c-1', state: 'KEPT', attached_to: null, disks: { hdd: 2, ssd: 0 }, size_bytes: 8 << 30,
  members: [], created_at: '2026-11-26T10:00:00Z', updated_at: '2026-11-26T10:00:00Z',
};

afterEach(() => vi.unstubAllGlobals());

describe('DatasetList', () => {
  it('lists your datasets and reclaims a kept one after a confirmation', async () => {
    const calls: string[] = [];
    vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit = {}) => {
      calls.push(`${init.method ?? 'GET'} ${url}`);
      const attached = { ...KEPT, id: 'd2', name: 'in-use', state: 'ATTACHED', attached_to: 'c-2' };
      return Promise.resolve(jsonResponse(init.method === 'DELETE' ? { ...KEPT, state: 'RECLAIMED' } : [KEPT, attached]));
    }));
    renderWithProviders(<DatasetList username="ann" />);
    const rows = within(await screen.findByRole('table', { name: 'datasets' })).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]!.textContent).toContain('hdd:2');
    expect(within(rows[2]!).queryByRole('button')).toBeNull(); // attached: not reclaimable
    fireEvent.click(within(rows[1]!).getByRole('button', { name: 'Reclaim' }));
    fireEvent.click(screen.getByRole('button', { name: 'Yes, wipe it' }));
    await waitFor(() => expect(calls).toContain('DELETE /datasets/ann/my-data'));
    expect(calls[0]).toBe('GET /datasets/ann');
  });

  it('lists every user\'s for admins', async () => {
    const calls: string[] = [];
    vi.stubGlobal('fetch', vi.fn((url: string) => {
      calls.push(url);
      return Promise.resolve(jsonResponse([KEPT]));
    }));
    renderWithProviders(<DatasetList username="" everyone />);
    await screen.findByRole('table', { name: 'datasets' });
    expect(calls).toEqual(['/admin/datasets']);
    expect(screen.getByRole('columnheader', { name: 'Owner' })).toBeTruthy();
  });

  it('sums disks per class', () => {
    expect(diskSummary({ ssd: 1, hdd: 2, nvme: 0 })).toBe('hdd:2 ssd:1');
    expect(diskSummary({})).toBe('-');
  });
});
