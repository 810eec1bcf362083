import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Node } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { NodeRack } from './node-rack';

function aNode(rack: string | null): Node {
  return {
    id: 1, name: 'node-1', address: '10.0.0.1', disk_root: '/srv/spindle/node-1', cpus: 4, mem_mb: 8192,
    created_at: '2026-11-23T19:52:40Z', last_seen_at: null, rack, failure_domain: rack ?? 'node-1',
  };
}

type Call = { url: string; method: string; body?: unknown };

/** `fetch` answering each PATCH with `answer(body)`, recording every call. */
function stubPatch(answer: (body: { rack: string | null }) => Response) {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit = {}) => {
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    calls.push({ url, method: init.method ?? 'GET', body });
    return Promise.resolve(answer(body));
  }));
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe('NodeRack', () => {
  it.each([
    { before: null, typed: 'rack-1', sent: 'rack-1', domain: 'rack-1' },
    { before: 'rack-1', typed: ' rack-2 ', sent: 'rack-2', domain: 'rack-2' },
    { before: 'rack-1', typed: '', sent: null, domain: 'node-1' },
  ])('saves rack $typed over $before as $sent: failure domain $domain', async ({ before, typed, sent, domain }) => {
    const calls = stubPatch((body) => jsonResponse(aNode(body.rack)));
    renderWithProviders(<NodeRack node={aNode(before)} />);
    const form = screen.getByRole('form', { name: 'rack of node-1' });
    expect(within(form).getByLabelText('Rack')).toHaveValue(before ?? '');
    expect(form).toHaveTextContent(`Failure domain: ${before ?? 'node-1'}`);

    fireEvent.change(within(form).getByLabelText('Rack'), { target: { value: typed } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(form).toHaveTextContent(`Failure domain: ${domain}`));
    expect(calls).toEqual([{ url: '/admin/nodes/node-1', method: 'PATCH', body: { rack: sent } }]);
    expect(within(form).getByLabelText('Rack')).toHaveValue(sent ?? '');
    expect(form.textContent?.includes('no rack: the node itself')).toBe(sent === null);
  });

  it("shows the API's refusal of a rack and keeps the failure domain as it was", async () => {
    stubPatch(() =>
      jsonResponse({ error: { code: 'VALIDATION_FAILED', message: 'the request is not valid', details: {} } }, 422));
    renderWithProviders(<NodeRack node={aNode('rack-1')} />);
    const form = screen.getByRole('form', { name: 'rack of node-1' });
    fireEvent.change(within(form).getByLabelText('Rack'), { target: { value: 'Rack 1' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));

    const alert = await within(form).findByRole('alert');
    expect(alert).toHaveTextContent('Could not set the rack of node-1');
    expect(within(alert).getByText('VALIDATION_FAILED')).toBeInTheDocument();
    expect(form).toHaveTextContent('Failure domain: rack-1');
  });
});
