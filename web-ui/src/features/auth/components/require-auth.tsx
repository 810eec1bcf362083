import { Navigate, Outlet, useLocation } from 'react-router';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { paths } from '@/config/paths';
import { ApiError } from '@/lib/api-client';
import { clearToken, getToken } from '@/lib/session';

import { useMe } from '../hooks/use-me';

/** Pages below it need a signed-in user (admin pages: an admin); others go to the sign-in page. */
export function RequireAuth({ admin = false }: { admin?: boolean }) {
  const location = useLocation();
  const me = useMe();
  if (getToken() === null) return <Navigate to={paths.login.path} replace state={{ from: location.pathname }} />;
  if (me.isPending) return <LoadingState label="Checking your sign-in…" />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401) {
      clearToken();
      return <Navigate to={paths.login.path} replace state={{ from: location.pathname }} />;
    }
    return <ErrorAlert title="Could not check your sign-in" error={me.error} onRetry={() => void me.refetch()} />;
  }
  if (admin && !me.data.is_admin) {
    return <ErrorAlert title="Admins only" error={new Error('This page is for administrators.')} />;
  }
  return <Outlet />;
}
