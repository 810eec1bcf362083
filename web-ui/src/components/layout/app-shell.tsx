import { NavLink, Outlet } from 'react-router';

import { navigation } from '@/config/paths';

/** The frame around every page: product name, main navigation, and the page itself. */
export function AppShell() {
  return (
    <div className="shell">
      <header className="shell__header">
        <span className="shell__brand">Spindle</span>
        <nav aria-label="Main">
          <ul className="shell__nav">
            {navigation.map((item) => (
              <li key={item.path}>
                <NavLink to={item.path} className="shell__nav-link">
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main className="shell__main">
        <Outlet />
      </main>
    </div>
  );
}
