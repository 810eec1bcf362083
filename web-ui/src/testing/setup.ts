import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// Vitest globals are off, so Testing Library cannot register its own cleanup.
afterEach(cleanup);

// findBy*/waitFor wait for what a test expects up to 10 s, not Testing Library's 1 s: beside the
// browser tests and the platform's containers on 2 cores, a first render of a page took longer
// than 1 s (the admin page's node list, in CI run 24). Nothing passes sooner or later for it: a
// query that finds what it looks for returns as soon as it does.
configure({ asyncUtilTimeout: 10_000 });
