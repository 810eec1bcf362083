import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// The api-server serves the build under /ui/; the API itself stays at the origin's root.
const API_SERVER = 'http://127.0.0.1:8080';
const API_PATHS = ['/status', '/me', '/products', '/clusters', '/capacity', '/admin'];

export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  resolve: { tsconfigPaths: true },
  server: {
    // `npm run dev` forwards API calls to a running api-server, so fetches stay same-origin; WebSockets
    // too (a member's terminal), with the page's Host, which the api-server's Origin check compares.
    proxy: Object.fromEntries(API_PATHS.map((path) => [path, { target: API_SERVER, ws: true }])),
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'], // e2e/ holds the Playwright tests (npm run e2e)
    setupFiles: ['./src/testing/setup.ts'],
    testTimeout: 30_000, // above the setup's 10 s waits (Vitest's own 5 s would end them first)
    restoreMocks: true,
    unstubGlobals: true,
  },
});
