import { createBrowserRouter, Navigate, RouterProvider } from 'react-router';

import { AppShell } from '@/components/layout/app-shell';
import { paths } from '@/config/paths';
import { PlatformStatusPage } from '@/features/status/components/platform-status-page';

import { NotFoundRoute } from './routes/not-found';

const router = createBrowserRouter(
  [
    {
      element: <AppShell />,
      children: [
        { index: true, element: <Navigate to={paths.status.path} replace /> },
        { path: paths.status.path, element: <PlatformStatusPage /> },
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
