// Client-side routes (relative to the /ui base). The navigation lists the pages that exist;
// catalog, clusters and admin join here when their features land.
export const paths = {
  status: { path: '/status', label: 'Status' },
} as const;

export const navigation = [paths.status];
