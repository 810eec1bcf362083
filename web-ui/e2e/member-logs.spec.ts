import { expect, test } from '@playwright/test';

import { SHOTS, api, peopleForTheseTests, runningStaticWeb, signIn } from './platform';

const people = peopleForTheseTests();

test("a member's log follows live on the cluster page", async ({ page }) => {
  const { cluster, path } = await runningStaticWeb(people.user.token);
  const member = cluster.members[0]!;

  await signIn(page, people.user.token);
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
  await api(people.user.token, 'DELETE', path);
});
