// Client-side routes (relative to the /ui base) and the main navigation.
export const paths = {
  login: { path: '/login', label: 'Sign in' },
  catalog: { path: '/catalog', label: 'Catalog' },
  launch: { path: '/catalog/:product/:version', label: 'Launch' },
  clusters: { path: '/clusters', label: 'My clusters' },
  cluster: { path: '/clusters/:owner/:product/:version/:id', label: 'Cluster' },
  admin: { path: '/admin', label: 'Admin' },
  status: { path: '/status', label: 'Status' },
} as const;

export const navigation = [paths.catalog, paths.clusters, paths.admin, paths.status];

export function launchPath(product: string, version: string): string {
  return `/catalog/${encodeURIComponent(product)}/${encodeURIComponent(version)}`;
}

export function clusterPagePath(c: { owner: string; product: string; version: string; id: string }): string {
  return `/clusters/${c.owner}/${c.product}/${c.version}/${c.id}`;
}
