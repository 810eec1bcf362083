import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';

import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import type { PlatformStatus } from '@/lib/api/types';
import { PlatformStatusPage } from './platform-status-page';

function stubStatusResponse(response: Promise<Response>) {
  const fetchMock = vi.fn(() => response);
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const status: PlatformStatus = {
  services: [
    { name: 'api-server', status: 'passing', instances: ['127.0.0.1:8080'], detail: '' },
    { name: 'disk-service', status: 'critical', instances: ['127.0.0.1:8083'], detail: 'HTTP GET /health: 503' },
    { name: 'scheduler', status: 'warning', instances: ['127.0.0.1:8082'], detail: 'slow offers' },
    { name: 'network-service', status: 'missing', instances: [], detail: 'not registered in Consul' },
  ],
};

describe('PlatformStatusPage', () => {
  it('shows a loading state while the status is fetched', () => {
    const fetchMock = stubStatusResponse(new Promise<Response>(() => {}));

    renderWithProviders(<PlatformStatusPage />);

    expect(screen.getByRole('status')).toHaveTextContent("Checking the platform's services");
    expect(fetchMock).toHaveBeenCalledWith('/status', expect.anything());
  });

  it('shows each service with a badge coloured by its health', async () => {
    stubStatusResponse(Promise.resolve(jsonResponse(status)));

    renderWithProviders(<PlatformStatusPage />);

    const rows = await screen.findAllByRole('row');
    expect(rows).toHaveLength(1 + status.services.length);
    const badgeOf = (service: string) =>
      within(screen.getByRole('row', { name: new RegExp(service) })).getByText(/passing|warning|critical|missing/);
    expect(badgeOf('api-server')).toHaveTextContent('passing');
    expect(badgeOf('api-server')).toHaveClass('badge--success');
    expect(badgeOf('scheduler')).toHaveClass('badge--warning');
    expect(badgeOf('disk-service')).toHaveClass('badge--danger');
    expect(badgeOf('network-service')).toHaveClass('badge--neutral');
    expect(screen.getByText('HTTP GET /health: 503')).toBeInTheDocument();
    expect(screen.getByText('127.0.0.1:8083')).toBeInTheDocument();
  });

  it("shows the API's error message as it is, with its code", async () => {
    const message = 'cannot reach Consul at http://127.0.0.1:8500: [Errno 111] Connection refused';
    stubStatusResponse(Promise.resolve(jsonResponse({ error: { code: 'CONSUL_UNAVAILABLE', message, details: {} } }, 503)));

    renderWithProviders(<PlatformStatusPage />);

    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText(message)).toBeInTheDocument();
    expect(within(alert).getByText('CONSUL_UNAVAILABLE')).toBeInTheDocument();
    expect(within(alert).getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });

  it('explains what to do when no service is reported', async () => {
    stubStatusResponse(Promise.resolve(jsonResponse({ services: [] })));

    renderWithProviders(<PlatformStatusPage />);

    expect(await screen.findByText('No services reported')).toBeInTheDocument();
    expect(screen.getByText('spindle status')).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
  });
});
