import { Link } from 'react-router';

import { Badge } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { launchPath } from '@/config/paths';
import type { ProductSummary } from '@/lib/api/types';

import { useProducts } from '../hooks/use-catalog';

/** One card per product, its versions as links to their launch forms. */
export function CatalogPage() {
  const products = useProducts();
  if (products.isPending) return <LoadingState label="Loading the catalog…" />;
  if (products.isError) return <ErrorAlert title="Could not load the catalog" error={products.error} onRetry={() => void products.refetch()} />;
  if (products.data.length === 0) {
    return <EmptyState title="The catalog is empty">Add a manifest under catalog/&lt;product&gt;/&lt;version&gt;/ and restart the api-server.</EmptyState>;
  }
  const byName = new Map<string, ProductSummary[]>();
  for (const p of products.data) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  return (
    <section className="page">
      <h1>Catalog</h1>
      <ul className="cards">
        {[...byName.entries()].map(([name, versions]) => (
          <li key={name} className="card" aria-label={`product ${name}`}>
            <h2 className="card__title">{name}</h2>
            <p>{versions.at(-1)?.description}</p>
            <p className="muted">Roles: {versions.at(-1)?.roles.join(', ')}</p>
            <p>
              {versions.map((v) => (
                <Link key={v.version} className="button button--primary" to={launchPath(v.name, v.version)}>
                  Launch {name} {v.version}
                </Link>
              ))}
            </p>
            {versions.map((v) => (
              <ImagesState key={v.version} product={v} />
            ))}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Nothing when the product's images are built; else what deploy/up's background build is at (a
 * launch meanwhile is accepted and waits for them). */
function ImagesState({ product }: { product: ProductSummary }) {
  const images = product.images;
  if (images.state === 'ready') return null;
  const step = images.step && images.steps ? ` (step ${images.step} of ${images.steps})` : '';
  return (
    <p className="muted" aria-label={`images of ${product.name} ${product.version}`}>
      {images.state === 'failed' ? <Badge tone="danger">image build failed</Badge> : <Badge tone="warning">preparing{step}</Badge>}{' '}
      {images.message}
      {images.state === 'preparing' && ' — a launch now waits for it.'}
    </p>
  );
}
