import { useQueryClient } from '@tanstack/react-query';
import { NavLink, Outlet, useNavigate } from 'react-router';

import { navigation, paths } from '@/config/paths';
import { useMe } from '@/features/auth/hooks/use-me';
import { clearToken } from '@/lib/session';

/** The frame around every page: product name, main navigation, who is signed in, and the page. */
export function AppShell() {
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const links = navigation.filter((item) => item !== paths.admin || me.data?.is_admin);

  function signOut() {
    clearToken();
    queryClient.clear();
    navigate(paths.login.path);
  }

  return (
    <div className="shell">
      <header className="shell__header">
        <span className="shell__brand">Spindle</span>
        <nav aria-label="Main">
          <ul className="shell__nav">
            {links.map((item) => (
              <li key={item.path}>
                <NavLink to={item.path} className="shell__nav-link">
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <span className="shell__user">
          {me.data ? (
            <>
              {me.data.username}{' '}
              <button type="button" className="button button--small" onClick={signOut}>
                Sign out
              </button>
            </>
          ) : (
            <NavLink to={paths.login.path} className="shell__nav-link">
              Sign in
            </NavLink>
          )}
        </span>
      </header>
      <main className="shell__main">
        <Outlet />
      </main>
    </div>
  );
}
