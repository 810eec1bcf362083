import { expect, test } from '@playwright/test';

import { SHOTS, api, peopleForTheseTests, runningStaticWeb, signIn } from './platform';

const people = peopleForTheseTests();

test("a member's terminal on the cluster page runs what is typed", async ({ page }) => {
  const { cluster, path } = await runningStaticWeb(people.user.token);
  const member = cluster.members[0]!;

  await signIn(page, people.user.token);
  await page.goto(`/ui${path}`);
  await page.getByRole('button', { name: `Open a terminal in ${member.member_id}` }).click();
  const terminal = page.getByRole('region', { name: `terminal of ${member.member_id}` });
  await expect(terminal).toHaveAttribute('data-state', 'open', { timeout: 30_000 });
  // xterm.js takes the keys where it has focus (its hidden textarea), as a person's typing.
  await terminal.click();
  await page.keyboard.type('echo hi-$((6*7))');
  await page.keyboard.press('Enter');
  // The shell's answer, not the echo of what was typed: only the answer says hi-42.
  await expect(terminal).toContainText('hi-42', { timeout: 30_000 });
  await terminal.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/member-terminal.png`, fullPage: true });

  await page.keyboard.type('exit');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('status').filter({ hasText: 'Session ended' })).toContainText('the shell exited, exit code 0');
  const records = await api<{ kind: string; command: string[]; exit_code: number | null }[]>(people.user.token, 'GET', `${path}/execs`);
  expect(records.filter((r) => r.kind === 'terminal')).toEqual([
    expect.objectContaining({ command: ['<terminal>'], exit_code: 0 }),
  ]);
  await api(people.user.token, 'DELETE', path);
});
