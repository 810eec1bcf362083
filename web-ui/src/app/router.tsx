import { createBrowserRouter, Navigate, RouterProvider } from 'react-router';

import { AppShell } from '@/components/layout/app-shell';
import { paths } from '@/config/paths';
import { AdminPage } from '@/features/admin/components/admin-page';
import { LoginPage } from '@/features/auth/components/login-page';
import { RequireAuth } from '@/features/auth/components/require-auth';
import { CatalogPage } from '@/features/catalog/components/catalog-page';
import { LaunchPage } from '@/features/catalog/components/launch-page';
import { ClusterDetailPage } from '@/features/clusters/components/cluster-detail-page';
import { ClusterListPage } from '@/features/clusters/components/cluster-list-page';
import { PlatformStatusPage } from '@/features/status/components/platform-status-page';

import { NotFoundRoute } from './routes/not-found';

const router = createBrowserRouter(
  [
    {
      element: <AppShell />,
      children: [
        { index: true, element: <Navigate to={paths.catalog.path} replace /> },
        { path: paths.login.path, element: <LoginPage /> },
        { path: paths.status.path, element: <PlatformStatusPage /> },
        {
          element: <RequireAuth />,
          children: [
            { path: paths.catalog.path, element: <CatalogPage /> },
            { path: paths.launch.path, element: <LaunchPage /> },
            { path: paths.clusters.path, element: <ClusterListPage /> },
            { path: paths.cluster.path, element: <ClusterDetailPage /> },
          ],
        },
        { element: <RequireAuth admin />, children: [{ path: paths.admin.path, element: <AdminPage /> }] },
        { path: '*', element: <NotFoundRoute /> },
      ],
    },
  ],
  // Vite's `base` ('/ui/') is the one place the mount point is configured.
  { basename: import.meta.env.BASE_URL.replace(/\/$/, '') },
);

export function AppRouter() {
  return <RouterProvider router={router} />;
}
