import { expect, test } from '@playwright/test';

import { SHOTS, api, peopleForTheseTests, runningStaticWeb, signIn } from './platform';

const people = peopleForTheseTests();

test('a cluster is resized with a preview, stopped and started again, and deleted keeping its disks', async ({ page }) => {
  test.setTimeout(600_000);
  const { cluster, path } = await runningStaticWeb(people.user.token);
  await signIn(page, people.user.token);
  await page.goto(`/ui${path}`);
  const state = page.getByTestId('cluster-state');
  await expect(state).toHaveText('RUNNING');

  // Resize 1 → 2: the preview says where the new member goes before anything happens.
  await page.getByLabel('server count').fill('2');
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByRole('status', { name: 'placement preview' })).toContainText(`${cluster.id}-server-2`);
  await page.screenshot({ path: `${SHOTS}/resize-preview.png`, fullPage: true });
  await page.getByRole('button', { name: 'Resize' }).click();
  // The new member is listed once it is added (RESIZING); the cluster is RUNNING once it runs.
  await expect(page.getByRole('table', { name: 'members' })).toContainText(`${cluster.id}-server-2`, { timeout: 60_000 });
  await expect(state).toHaveText('RUNNING', { timeout: 300_000 });
  await expect(page.getByRole('table', { name: 'members' })).not.toContainText('PENDING');

  await page.getByRole('button', { name: 'Stop cluster' }).click();
  await expect(state).toHaveText('STOPPED', { timeout: 300_000 });
  await page.getByRole('button', { name: 'Start cluster' }).click();
  await expect(state).toHaveText('RUNNING', { timeout: 300_000 });
  const members = await api<{ members: { ip: string }[] }>(people.user.token, 'GET', path);
  expect(members.members.map((m) => m.ip)).toContain(cluster.members[0]!.ip);

  await page.getByRole('button', { name: 'Delete cluster' }).click();
  await page.getByRole('checkbox').check();
  await page.getByLabel('dataset name').fill('e2e-kept');
  await page.getByRole('button', { name: 'Yes, delete it' }).click();
  await expect(state).toHaveText('DESTROYED', { timeout: 300_000 });
  await page.getByRole('link', { name: 'My clusters' }).click();
  const datasets = page.getByRole('table', { name: 'datasets' });
  await expect(datasets).toContainText('e2e-kept');
  await expect(datasets).toContainText('KEPT');
  await page.screenshot({ path: `${SHOTS}/datasets.png`, fullPage: true });
  await datasets.getByRole('button', { name: 'Reclaim' }).click();
  await page.getByRole('button', { name: 'Yes, wipe it' }).click();
  await expect(datasets).toHaveCount(0, { timeout: 30_000 });
});
