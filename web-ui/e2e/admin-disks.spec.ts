import { expect, test, type Page } from '@playwright/test';

import { SHOTS, api, newAdminToken, signIn } from './platform';

type Disk = { id: number; device_path: string; disk_class: string; state: string };

let admin: string;
let failed: Disk | undefined;

test.beforeAll(async () => {
  admin = await newAdminToken();
});

test.afterAll(async () => {
  // Leave the inventory as it was: the disk this test failed is repaired (wiped) back to free.
  if (!failed) return;
  const now = await api<Disk>(admin, 'GET', `/admin/disks/${failed.id}`);
  if (now.state === 'failed') await api(admin, 'POST', `/admin/disks/${failed.id}/wipe`, { reason: 'e2e clean-up' });
  for (let i = 0; i < 120 && (await api<Disk>(admin, 'GET', `/admin/disks/${failed.id}`)).state !== 'free'; i++) {
    await new Promise((r) => setTimeout(r, 500));
  }
});

async function freeHdds(page: Page): Promise<number> {
  await page.goto('/ui/catalog/static-web/1.0');
  const text = await page.getByTestId('free-hdd').textContent();
  return Number(/\((\d+) free\)/.exec(text ?? '')?.[1]);
}

test('an admin marks a disk failed on the disk map and the launch form counts one free disk less', async ({ page }) => {
  await signIn(page, admin);
  const before = await freeHdds(page);
  expect(before).toBeGreaterThan(0);

  await page.getByRole('link', { name: 'Admin' }).click();
  const tile = page.getByRole('listitem', { name: /hdd free$/ }).first();
  const label = (await tile.getAttribute('aria-label')) ?? '';
  const device = label.split(' ')[1];
  await tile.click();
  await page.getByRole('button', { name: 'Mark failed' }).click();
  const failedTile = page.getByRole('listitem', { name: `disk ${device} hdd failed` });
  await expect(failedTile).toHaveAttribute('data-state', 'failed');
  const disks = await api<{ items: Disk[] }>(admin, 'GET', '/admin/disks?page_size=1000');
  failed = disks.items.find((d) => d.device_path === device);
  await expect(page.getByRole('table', { name: 'IP pools' })).toContainText('default');
  await page.screenshot({ path: `${SHOTS}/admin-disk-map.png`, fullPage: true });

  expect(await freeHdds(page)).toBe(before - 1);

  await page.getByRole('link', { name: 'Admin' }).click();
  await failedTile.click();
  await page.getByRole('button', { name: 'Repair (wipe)' }).click();
  await expect(page.getByRole('listitem', { name: `disk ${device} hdd free` })).toBeVisible({ timeout: 60_000 });
});
