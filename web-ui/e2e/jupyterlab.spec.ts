import { randomBytes } from 'node:crypto';

import { expect, test } from '@playwright/test';

import { SHOTS, api, destroyClusters, newAdminToken, newUser, removeUser, signIn } from './platform';

type Cluster = {
  id: string;
  owner: string;
  product: string;
  version: string;
  state: string;
  reason?: string | null;
  members: { role: string; ip: string | null }[];
};

const SPARK = {
  roles: { master: { cpus: 0.25 }, worker: { count: 1, cpus: 0.25, mem_mb: 1536, disks: { hdd: 0 } } },
  wait_for_resources: true,
};
// Typed into the notebook's first cell as one paste: the kernel's SparkSession runs on the bound
// cluster's master (the platform rendered its spark-defaults.conf), its executors on the worker.
const CELL = [
  'from pyspark.sql import SparkSession',
  'sc = SparkSession.builder.appName("browser-e2e").getOrCreate().sparkContext',
  'print(sc.master, "sum =", sc.parallelize(range(1000), 4).sum())',
].join('\n');

let admin: string;
let user: { username: string; token: string } | undefined;

test.beforeAll(async () => {
  admin = await newAdminToken();
});

test.afterAll(async () => {
  if (!user) return;
  await destroyClusters(user.token, user.username);
  await removeUser(admin, user.username);
});

const pathOf = (c: Cluster) => `/clusters/${c.owner}/${c.product}/${c.version}/${c.id}`;

async function running(token: string, cluster: Cluster): Promise<Cluster> {
  for (let i = 0; i < 600; i++) {
    const now = await api<Cluster>(token, 'GET', pathOf(cluster));
    if (now.state === 'RUNNING') return now;
    if (now.state === 'FAILED') throw new Error(`${cluster.product} failed: ${now.reason}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${cluster.product} ${cluster.id} is not RUNNING after 10 minutes`);
}

test('a user opens JupyterLab from the cluster page, logs in with the token and runs a Spark job on the bound cluster', async ({
  page,
}) => {
  test.setTimeout(900_000);
  user = await newUser(admin);
  const token = randomBytes(24).toString('base64url');
  const spark = await running(user.token, await api<Cluster>(user.token, 'POST', '/products/spark/3.5', SPARK));
  const jupyter = await running(
    user.token,
    await api<Cluster>(user.token, 'POST', '/products/jupyterlab/4', {
      roles: { server: { cpus: 0.25, mem_mb: 1536, disks: { hdd: 0, ssd: 1 } } },
      settings: { token },
      bind: { spark: spark.id },
      wait_for_resources: true,
    }),
  );

  await signIn(page, user.token);
  await page.goto(`/ui${pathOf(jupyter)}`);
  await expect(page.getByTestId('cluster-state')).toHaveText('RUNNING');
  await page.screenshot({ path: `${SHOTS}/jupyterlab-cluster.png`, fullPage: true });

  // The member's service link opens JupyterLab in a new tab, which asks for the token first. The
  // server may still be starting right after its port opened: the user reloads until it answers.
  const [lab] = await Promise.all([page.waitForEvent('popup'), page.getByRole('link', { name: 'jupyterlab' }).click()]);
  const password = lab.locator('#password_input');
  await expect(async () => {
    if (!(await password.isVisible())) await lab.reload();
    await expect(password).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 120_000 });
  await expect(lab.getByText('Password or token')).toBeVisible();
  await lab.screenshot({ path: `${SHOTS}/jupyterlab-login.png`, fullPage: true });
  await password.fill('not-the-token-not-the-token');
  await lab.getByRole('button', { name: 'Log in' }).click();
  await expect(password).toBeVisible(); // a wrong token gets the login page again
  await password.fill(token);
  await lab.getByRole('button', { name: 'Log in' }).click();

  // A new notebook from the launcher; the cell runs a Spark job on the bound cluster.
  await lab.locator('.jp-LauncherCard[data-category="Notebook"]').first().click({ timeout: 120_000 });
  await expect(lab.getByText('Python 3 (ipykernel) | Idle')).toBeVisible({ timeout: 120_000 }); // the kernel is up
  const editor = lab.locator('.jp-Notebook .jp-Cell .cm-content').first();
  await editor.click();
  await lab.keyboard.insertText(CELL);
  await lab.keyboard.press('Shift+Enter');
  const masterIp = spark.members.find((m) => m.role === 'master')?.ip;
  const output = lab.locator('.jp-OutputArea-output').filter({ hasText: 'sum =' });
  await expect(output).toContainText(`spark://${masterIp}:7077 sum = 499500`, { timeout: 300_000 });
  await lab.screenshot({ path: `${SHOTS}/jupyterlab-spark.png`, fullPage: true });

  await destroyClusters(user.token, user.username);
  for (const c of [jupyter, spark]) expect((await api<Cluster>(user.token, 'GET', pathOf(c))).state).toBe('DESTROYED');
});
