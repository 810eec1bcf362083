import { defineConfig } from '@playwright/test';

// End-to-end tests against the running platform (`./deploy/up`), in Debian's Chromium, headless.
export default defineConfig({
  testDir: './e2e',
  // (JupyterLab's browser test takes minutes; `npm run e2e:products` runs it alone.)
  outputDir: './test-output/results',
  timeout: 240_000,
  expect: { timeout: 15_000 },
  workers: 1, // one platform, whose disks the tests share
  reporter: [['list']],
  use: {
    baseURL: process.env.SPINDLE_URL ?? 'http://127.0.0.1:8080',
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
