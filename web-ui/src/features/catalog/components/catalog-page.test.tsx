import { screen, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { ProductSummary } from '@/lib/api/types';
import { jsonResponse } from '@/testing/json-response';
import { renderWithProviders } from '@/testing/render-with-providers';

import { CatalogPage } from './catalog-page';

function product(name: string, images: ProductSummary['images']): ProductSummary {
  return { name, version: '1', description: `${name} things`, roles: ['server'], path: `/products/${name}/1`, images };
}

afterEach(() => vi.unstubAllGlobals());

describe('CatalogPage', () => {
  it('says which products’ images are still being built, or failed to build', async () => {
    const products = [
      product('ready', { state: 'ready' }),
      product('building', {
        state: 'preparing',
        image: 'spindle/building:1',
        image_state: 'building',
        step: 3,
        steps: 12,
        message: 'image spindle/building:1 building (step 3 of 12)',
      }),
      product('broken', { state: 'failed', image: 'spindle/broken:1', image_state: 'failed', message: 'image spindle/broken:1 failed: see its log' }),
    ];
    vi.stubGlobal(
      'fetch',
      vi.fn(() => Promise.resolve(jsonResponse({ products }))),
    );
    renderWithProviders(
      <MemoryRouter>
        <CatalogPage />
      </MemoryRouter>,
    );
    const building = within(await screen.findByLabelText('images of building 1'));
    expect(building.getByText('preparing (step 3 of 12)')).toHaveClass('badge--warning');
    expect(building.getByText(/image spindle\/building:1 building \(step 3 of 12\)/)).toBeInTheDocument();
    const broken = within(screen.getByLabelText('images of broken 1'));
    expect(broken.getByText('image build failed')).toHaveClass('badge--danger');
    expect(screen.queryByLabelText('images of ready 1')).toBeNull();
    expect(screen.getByRole('link', { name: 'Launch building 1' })).toBeInTheDocument(); // a launch is still offered
  });
});
