import { expect, test } from '@playwright/test';

import { SHOTS, api, destroyClusters, newAdminToken, newUser, runningStaticWeb, signIn } from './platform';

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

test("a member's log follows live on the cluster page", async ({ page }) => {
  const { cluster, path } = await runningStaticWeb(user.token);
  const member = cluster.members[0]!;

  await signIn(page, user.token);
  await page.goto(`/ui${path}`);
  const logs = page.getByRole('region', { name: `live logs of ${member.member_id}` });
  await expect(logs).toBeVisible();
  // A request to the member after the page opened its stream: python's http.server logs it, live.
  const marker = `/index.html?from-the-browser-test-${Date.now()}`;
  await expect(async () => {
    await fetch(`http://${member.ip}:8000${marker}`);
    await expect(logs).toContainText(marker, { timeout: 5_000 });
  }).toPass({ timeout: 60_000 });
  await logs.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/member-logs.png`, fullPage: true });
  await api(user.token, 'DELETE', path);
});
