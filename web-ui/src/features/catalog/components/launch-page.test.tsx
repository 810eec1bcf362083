import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Manifest, Plan } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { LaunchPage } from './launch-page';

const NODE_NAMES = {
  type: 'array',
  uniqueItems: true,
  default: [],
  items: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
};

/** A static-web manifest as the API serves it: its options schema with the shared placement option. */
const MANIFEST: Manifest = {
  name: 'static-web',
  version: '1.0',
  description: 'a web server per member',
  image: 'spindle/static-web:1.0',
  roles: { server: { count: { default: 1, min: 1, max: 5 }, cpus: 0.5, mem_mb: 128 } },
  options_schema: {
    type: 'object',
    properties: {
      roles: {
        type: 'object',
        properties: { server: { type: 'object', properties: { count: { type: 'integer', minimum: 1, maximum: 5, default: 1 } } } },
      },
      placement: {
        type: 'object',
        properties: {
          strategy: { enum: ['spread', 'pack'], default: 'spread' },
          anti_affinity: { title: 'Anti-affinity', type: 'array', uniqueItems: true, default: [], items: { enum: ['server'] } },
          preferred_nodes: NODE_NAMES,
          excluded_nodes: NODE_NAMES,
        },
      },
    },
  },
};

const REFUSED: Plan = {
  placeable: false,
  summary: 'server-2 fits no node: node-1: already has a member of role server of cluster plan-ann (anti-affinity: one per node)',
  members: [],
  reasons: [
    {
      member_id: 'server-2',
      nodes: [
        { node: 'node-1', constraint: 'anti_affinity', message: 'already has a member of role server of cluster plan-ann (anti-affinity: one per node)' },
        { node: 'node-2', constraint: 'excluded', message: "excluded by the launch's placement (excluded_nodes)" },
      ],
    },
  ],
};

/** The API as the form sees it: the manifest, the free disks, and plans (each body sent is kept). */
function stubApi(plan: Plan) {
  const plans: unknown[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn((url: string, init: RequestInit = {}) => {
      if (url === '/products/static-web/1.0') return Promise.resolve(jsonResponse(MANIFEST));
      if (url === '/capacity') return Promise.resolve(jsonResponse({ disks: [] }));
      if (url === '/products/static-web/1.0/plan' && init.method === 'POST') {
        plans.push(JSON.parse(String(init.body)));
        return Promise.resolve(jsonResponse(plan));
      }
      return Promise.resolve(jsonResponse({ error: { code: 'NOT_FOUND', message: url, details: {} } }, 404));
    }),
  );
  return plans;
}

function renderForm() {
  return renderWithProviders(
    <MemoryRouter initialEntries={['/catalog/static-web/1.0']}>
      <Routes>
        <Route path="/catalog/:product/:version" element={<LaunchPage />} />
      </Routes>
    </MemoryRouter>,
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('LaunchPage placement', () => {
  it('shows the placement fields, sends them with the preview and lists each node’s reason', async () => {
    const plans = stubApi(REFUSED);
    renderForm();
    const placement = within(await screen.findByRole('group', { name: 'Placement' }));
    expect(placement.getByLabelText('Strategy')).toHaveValue('spread');
    const server = placement.getByRole('checkbox', { name: 'server' });
    expect(server).not.toBeChecked();

    fireEvent.change(screen.getByLabelText('Count'), { target: { value: '2' } });
    fireEvent.change(placement.getByLabelText('Strategy'), { target: { value: 'pack' } });
    fireEvent.click(server);
    fireEvent.change(placement.getByLabelText('Excluded nodes'), { target: { value: 'node-2, node-3' } });
    fireEvent.click(screen.getByRole('button', { name: 'Preview placement' }));

    await waitFor(() => expect(plans).toHaveLength(1));
    expect(plans[0]).toEqual({
      roles: { server: { count: 2 } },
      placement: { strategy: 'pack', anti_affinity: ['server'], excluded_nodes: ['node-2', 'node-3'] },
    });
    const preview = await screen.findByRole('status', { name: 'placement preview' });
    expect(preview).toHaveTextContent('It does not fit now');
    expect(preview).toHaveTextContent('node-1 — already has a member of role server');
    expect(preview).toHaveTextContent("node-2 — excluded by the launch's placement (excluded_nodes)");
    expect(screen.getByRole('button', { name: 'Confirm launch' })).toBeDisabled();
  });

  it('refuses a node name the schema does not allow before asking the API', async () => {
    const plans = stubApi(REFUSED);
    renderForm();
    const placement = within(await screen.findByRole('group', { name: 'Placement' }));
    fireEvent.change(placement.getByLabelText('Preferred nodes'), { target: { value: 'node-1, rack/a' } });
    expect(await screen.findByRole('alert')).toHaveTextContent('Preferred nodes rack/a: has characters that are not allowed');
    expect(screen.getByRole('button', { name: 'Preview placement' })).toBeDisabled();
    expect(plans).toHaveLength(0);
  });
});
