import { Link } from 'react-router';

import { paths } from '@/config/paths';

/** Shown for any /ui path that is not a page (the api-server answers them all with the app). */
export function NotFoundRoute() {
  return (
    <section>
      <title>Page not found · Spindle</title>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. Go to the <Link to={paths.status.path}>platform status</Link>.
      </p>
    </section>
  );
}
