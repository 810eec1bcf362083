// Users and clean-up for the browser tests, through the platform's own API and CLI tools.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect, test, type Page } from '@playwright/test';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STATE_DIR = process.env.SPINDLE_STATE_DIR ?? '/var/lib/spindle';
export const API = process.env.SPINDLE_URL ?? 'http://127.0.0.1:8080';
export const SHOTS = join(REPO, 'web-ui', 'test-output', 'screenshots');
mkdirSync(SHOTS, { recursive: true });

function platformEnv(): Record<string, string> {
  const lines = readFileSync(join(STATE_DIR, 'spindle.env'), 'utf8').split('\n');
  return Object.fromEntries(lines.filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

/** The tests' admin `e2e-admin` (made the way deploy makes the first admin) with a fresh token.
 * Asynchronous: a test process blocked for seconds does not see the API server close the kept-alive
 * connection of its last request (uvicorn: after 5 s idle), and its next request fails on that socket. */
export function newAdminToken(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      join(REPO, '.venv', 'bin', 'spindle-bootstrap-admin'),
      ['--username', 'e2e-admin', '--rotate-token'],
      { env: { ...process.env, ...platformEnv() } },
      (error, stdout) => (error ? reject(error) : resolve(stdout.toString().trim())),
    );
  });
}

export async function api<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${API}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

// The ledger of users tests made (tests/support/live_users.py): one file per user with this process's pid
// and start time, so that the next run removes the users (and clusters) of a run killed before its clean-up.
const LEDGER = join(STATE_DIR, 'test-users');

function processKey(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return `${process.pid} ${stat.slice(stat.lastIndexOf(')') + 1).trim().split(' ')[19]}`;
}

/** A new ordinary user, created by an admin through the API; returns username and token. */
export async function newUser(adminToken: string): Promise<{ username: string; token: string }> {
  const username = `e2e-${randomBytes(4).toString('hex')}`;
  mkdirSync(LEDGER, { recursive: true });
  writeFileSync(join(LEDGER, username), processKey());
  return api(adminToken, 'POST', '/admin/users', { username });
}

/** Removes a user `newUser` made (once their clusters are gone). */
export async function removeUser(adminToken: string, username: string): Promise<void> {
  await api(adminToken, 'DELETE', `/admin/users/${username}`);
  rmSync(join(LEDGER, username), { force: true });
}

type Cluster = { id: string; owner: string; product: string; version: string; state: string };

/** The people of one spec file: an admin token and a fresh ordinary user, made before its tests (in a
 * `test.beforeAll`) and removed after them with whatever clusters they left (`test.afterAll`). */
export function peopleForTheseTests(): { admin: string; user: { username: string; token: string } } {
  const people = { admin: '', user: { username: '', token: '' } };
  test.beforeAll(async () => {
    people.admin = await newAdminToken();
    people.user = await newUser(people.admin);
  });
  test.afterAll(async () => {
    await destroyClusters(people.user.token, people.user.username); // whatever a failed test left behind
    await removeUser(people.admin, people.user.username);
  });
  return people;
}

/** Deletes every cluster of `username` that is not destroyed yet and waits until they are. */
export async function destroyClusters(token: string, username: string): Promise<void> {
  const path = (c: Cluster) => `/clusters/${c.owner}/${c.product}/${c.version}/${c.id}`;
  const page = await api<{ items: Cluster[] }>(token, 'GET', `/clusters/${username}`);
  const live = page.items.filter((c) => c.state !== 'DESTROYED');
  for (const c of live) if (c.state !== 'DESTROYING') await api(token, 'DELETE', path(c));
  for (const c of live) {
    for (let i = 0; i < 240 && (await api<Cluster>(token, 'GET', path(c))).state !== 'DESTROYED'; i++) {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/ui/login');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Catalog' }).waitFor();
}

export type StaticWeb = { id: string; owner: string; product: string; version: string; state: string;
  members: { member_id: string; ip: string }[] };

/** A static-web cluster of one server launched by the user of `token`, once RUNNING, and its API path. */
export async function runningStaticWeb(token: string): Promise<{ cluster: StaticWeb; path: string }> {
  const launched = await api<StaticWeb>(token, 'POST', '/products/static-web/1.0', {
    roles: { server: { count: 1, cpus: 0.1, disks: { hdd: 1 } } }, wait_for_resources: true,
  });
  const path = `/clusters/${launched.owner}/${launched.product}/${launched.version}/${launched.id}`;
  await expect.poll(async () => (await api<StaticWeb>(token, 'GET', path)).state, { timeout: 300_000 }).toBe('RUNNING');
  return { cluster: await api<StaticWeb>(token, 'GET', path), path };
}
