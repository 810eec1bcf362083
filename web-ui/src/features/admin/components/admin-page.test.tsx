import { screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Node } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { AdminPage } from './admin-page';

function aNode(name: string, rack: string | null): Node {
  return {
    id: 1, name, address: '10.0.0.1', disk_root: `/srv/spindle/${name}`, cpus: 4, mem_mb: 8192,
    created_at: '2026-11-23T19:52:40Z', last_seen_at: null, rack, failure_domain: rack ?? name,
  };
}

afterEach(() => vi.unstubAllGlobals());

describe('AdminPage', () => {
  it("shows each node's rack and failure domain with a form to change it", async () => {
    // Only the node list is answered: every other section of the page shows its own error.
    vi.stubGlobal('fetch', vi.fn((url: string) => Promise.resolve(url === '/admin/nodes'
      ? jsonResponse([aNode('node-1', 'rack-1'), aNode('node-2', null)])
      : jsonResponse({ error: { code: 'NOT_STUBBED', message: url, details: {} } }, 599))));
    renderWithProviders(<MemoryRouter><AdminPage /></MemoryRouter>);

    const first = await screen.findByRole('form', { name: 'rack of node-1' });
    expect(within(first).getByLabelText('Rack')).toHaveValue('rack-1');
    expect(first).toHaveTextContent('Failure domain: rack-1');
    const second = screen.getByRole('form', { name: 'rack of node-2' });
    expect(within(second).getByLabelText('Rack')).toHaveValue('');
    expect(second).toHaveTextContent('Failure domain: node-2 (no rack: the node itself)');
  });
});
