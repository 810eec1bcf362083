import { expect, test } from '@playwright/test';

import { SHOTS, type StaticWeb, api, destroyClusters, newAdminToken, newUser, removeUser, signIn } from './platform';

const SMALL = { roles: { server: { count: 1, cpus: 0.1, mem_mb: 64, disks: { hdd: 0 } } } };

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

test("an admin sets a user's IP quota in the web UI and the user sees their usage against it", async ({ page, browser }) => {
  user = await newUser(admin);
  await signIn(page, admin);
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.getByLabel('User', { exact: true }).fill(user.username);
  await page.getByRole('button', { name: 'Show quota' }).click();
  await page.getByLabel('Floating IPs').fill('1');
  await page.getByRole('button', { name: `Save quota of ${user.username}` }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'quotas set' })).toContainText(user.username);

  // The usage shown below is what a running cluster holds (one IP): wait for it, so it is not read
  // while the cluster could still fail and give its IP back.
  const first = await api<StaticWeb>(user.token, 'POST', '/products/static-web/1.0', SMALL);
  const path = `/clusters/${first.owner}/${first.product}/${first.version}/${first.id}`;
  await expect.poll(async () => (await api<StaticWeb>(user.token, 'GET', path)).state, { timeout: 300_000 }).toBe('RUNNING');
  await expect(api(user.token, 'POST', '/products/static-web/1.0', SMALL)).rejects.toThrow(/403 .*QUOTA_EXCEEDED/);

  const userPage = await (await browser.newContext()).newPage();
  await signIn(userPage, user.token);
  await userPage.goto('/ui/clusters');
  const quota = userPage.getByRole('table', { name: 'your quota' });
  const ips = quota.getByRole('row', { name: /Floating IPs/ });
  await expect(ips).toContainText('1');
  await expect(ips).toContainText('full');
  await expect(quota.getByRole('row', { name: /Clusters/ })).toContainText('(default)');
  await userPage.screenshot({ path: `${SHOTS}/my-quota.png`, fullPage: true });
});
