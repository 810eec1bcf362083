import { expect, test, type Page } from '@playwright/test';

import { SHOTS, api, destroyClusters, newAdminToken, newUser, signIn } from './platform';

type Cluster = { id: string; owner: string; product: string; version: string; state: string };

let admin: string;
let user: { username: string; token: string };

test.beforeAll(async () => {
  admin = newAdminToken();
  user = await newUser(admin);
});

test.afterAll(async () => {
  await destroyClusters(user.token, user.username);
  await api(admin, 'DELETE', `/admin/users/${user.username}`);
});

// Shuffles (worker's disks: SPARK_LOCAL_DIRS) over and over for about two minutes: CPU and disk I/O.
const BUSY_JOB = `
import time
from pyspark.sql import SparkSession
sc = SparkSession.builder.appName("busy").getOrCreate().sparkContext
end = time.time() + 120
rounds = 0
while time.time() < end:
    pairs = sc.parallelize(range(400000), 8).map(lambda x: (x % 5000, str(x) * 8))
    rounds += pairs.groupByKey(8).mapValues(len).count() > 0
print("ROUNDS", rounds)
`;

/** The sum of the last values in the legend of `chart` over the lines whose key contains `key` ("key: value"). */
async function legendSum(page: Page, chart: string, key: string): Promise<number> {
  const items = await page.getByTestId(`chart-${chart}`).getByRole('listitem').filter({ hasText: key }).allTextContents();
  return items.reduce((sum, text) => sum + (Number(text.split(': ').at(-1)) || 0), 0);
}

async function chartMax(page: Page, chart: string): Promise<number> {
  return Number(await page.getByTestId(`chart-${chart}`).getAttribute('data-max'));
}

test("a Spark job's CPU and disk I/O show on the cluster page, and the admin sees the allocation rise", async ({ page }) => {
  await signIn(page, admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByTestId('chart-node-cpus')).toBeVisible({ timeout: 60_000 });
  const allocatedBefore = await legendSum(page, 'node-cpus', 'cpus_allocated');

  const launched = await api<Cluster>(user.token, 'POST', '/products/spark/3.5', {
    roles: { master: { cpus: 0.25, mem_mb: 512 }, worker: { count: 1, cpus: 0.75, mem_mb: 1024, disks: { hdd: 1 } } },
    wait_for_resources: true,
  });
  const path = `/clusters/${launched.owner}/${launched.product}/${launched.version}/${launched.id}`;
  await expect.poll(async () => (await api<Cluster>(user.token, 'GET', path)).state, { timeout: 300_000 }).toBe('RUNNING');
  await api(user.token, 'POST', `${path}/jobs`, { main: 'busy.py', files: { 'busy.py': Buffer.from(BUSY_JOB).toString('base64') } });

  // The owner's cluster page charts the job while it runs (points every 15 s, refreshed every 15 s).
  await signIn(page, user.token);
  await page.goto(`/ui${path}`);
  await expect(page.getByTestId('member-charts')).toBeVisible({ timeout: 90_000 });
  await expect.poll(() => chartMax(page, 'cpu'), { timeout: 120_000, intervals: [5_000] }).toBeGreaterThan(0.1);
  await expect.poll(() => chartMax(page, 'disk-io'), { timeout: 120_000, intervals: [5_000] }).toBeGreaterThan(0);
  await expect(page.getByTestId('chart-cpu').getByRole('listitem').filter({ hasText: `${launched.id}-worker-1` })).toBeVisible();
  await page.getByTestId('member-charts').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/cluster-charts.png`, fullPage: true });

  // The admin's capacity chart: what placed tasks hold went up by the cluster's cpus (and the job's driver).
  await signIn(page, admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect
    .poll(() => legendSum(page, 'node-cpus', 'cpus_allocated'), { timeout: 90_000, intervals: [5_000] })
    .toBeGreaterThanOrEqual(allocatedBefore + 0.9);
  await page.screenshot({ path: `${SHOTS}/admin-capacity.png`, fullPage: true });
  await api(user.token, 'DELETE', path);
});
