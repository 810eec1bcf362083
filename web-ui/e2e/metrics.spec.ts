import { expect, test, type Page } from '@playwright/test';

import { SHOTS, api, peopleForTheseTests, signIn } from './platform';

type Cluster = { id: string; owner: string; product: string; version: string; state: string };

const people = peopleForTheseTests();

// Shuffles (worker's disks: SPARK_LOCAL_DIRS) over and over, CPU and disk I/O, until the test deletes
// its cluster (10 minutes at most).
const BUSY_JOB = `
import time
from pyspark.sql import SparkSession
sc = SparkSession.builder.appName("busy").getOrCreate().sparkContext
end = time.time() + 600
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

/** The latest value the chart shows for one line (its legend item's data-last). */
async function lastValue(page: Page, chart: string, line: string): Promise<number> {
  const item = page.getByTestId(`chart-${chart}`).locator(`li[data-line="${line}"]`);
  return (await item.count()) ? Number(await item.getAttribute('data-last')) : -1;
}

/** The highest latest value the chart has shown for one line since this was made: a job's disk I/O
 * comes in bursts (the kernel writes dirty pages back every few seconds), so a 15 s point can be 0. */
function highestShown(page: Page, chart: string, line: string): () => Promise<number> {
  let highest = -1;
  return async () => (highest = Math.max(highest, await lastValue(page, chart, line)));
}

test("a Spark job's CPU and disk I/O show on the cluster page, and the admin sees the allocation rise", async ({ page }) => {
  await signIn(page, people.admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByTestId('chart-node-cpus')).toBeVisible({ timeout: 60_000 });
  // What earlier tests' clusters held is given back first (the chart follows within a scrape or two).
  await expect.poll(() => legendSum(page, 'node-cpus', 'cpus_allocated'), { timeout: 90_000, intervals: [5_000] }).toBeLessThan(0.5);
  const allocatedBefore = await legendSum(page, 'node-cpus', 'cpus_allocated');

  const launched = await api<Cluster>(people.user.token, 'POST', '/products/spark/3.5', {
    // (a worker of 2 GiB offers its executors 1.5 GiB: room for the 768 MiB executor Spark jobs ask for)
    roles: { master: { cpus: 0.25, mem_mb: 512 }, worker: { count: 1, cpus: 0.75, mem_mb: 2048, disks: { hdd: 1 } } },
    wait_for_resources: true,
  });
  const path = `/clusters/${launched.owner}/${launched.product}/${launched.version}/${launched.id}`;
  await expect.poll(async () => (await api<Cluster>(people.user.token, 'GET', path)).state, { timeout: 300_000 }).toBe('RUNNING');
  const job = await api<{ id: string }>(people.user.token, 'POST', `${path}/jobs`, {
    main: 'busy.py', files: { 'busy.py': Buffer.from(BUSY_JOB).toString('base64') },
  });
  await expect.poll(async () => (await api<{ state: string }>(people.user.token, 'GET', `${path}/jobs/${job.id}`)).state,
    { timeout: 120_000 }).toBe('RUNNING');

  // The owner's cluster page charts the job while it runs (points every 15 s, refreshed every 15 s).
  await signIn(page, people.user.token);
  await page.goto(`/ui${path}`);
  await expect(page.getByTestId('member-charts')).toBeVisible({ timeout: 90_000 });
  // While the job's shuffles run, the worker is busy now (its latest point, long after its start-up)
  // and writes to its disk (SPARK_LOCAL_DIRS) at more than 64 KiB/s.
  const worker = `${launched.id}-worker-1`;
  const cpu = highestShown(page, 'cpu', worker);
  const diskIo = highestShown(page, 'disk-io', worker);
  await expect.poll(cpu, { timeout: 120_000, intervals: [5_000] }).toBeGreaterThan(0.2);
  await expect.poll(diskIo, { timeout: 120_000, intervals: [5_000] }).toBeGreaterThan(64 * 1024);
  await page.getByTestId('member-charts').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/cluster-charts.png`, fullPage: true });

  // The admin's capacity chart: what placed tasks hold went up by at least the cluster's cpus (1.0).
  await signIn(page, people.admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await expect
    .poll(() => legendSum(page, 'node-cpus', 'cpus_allocated'), { timeout: 90_000, intervals: [5_000] })
    .toBeGreaterThanOrEqual(allocatedBefore + 0.95);
  await page.screenshot({ path: `${SHOTS}/admin-capacity.png`, fullPage: true });
  await api(people.user.token, 'DELETE', path);
});
