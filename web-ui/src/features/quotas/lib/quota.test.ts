import { describe, expect, it } from 'vitest';

import type { Quota } from '@/lib/api/types';

import { fieldsOf, quotaRows, updateOf, type LimitFields } from './quota';

const quota: Quota = {
  username: 'alice',
  defaults: ['clusters', 'mem_mb', 'disks.ssd', 'disks.nvme'],
  limits: { clusters: 10, cpus: 4, mem_mb: 65536, disks: { hdd: 2, ssd: 16, nvme: 16 }, floating_ips: 3 },
  usage: { clusters: 3, cpus: 0.3, mem_mb: 192, disks: { hdd: 2, ssd: 0, nvme: 0 }, floating_ips: 3 },
};

const empty: LimitFields = {
  clusters: '', cpus: '', mem_mb: '', floating_ips: '', 'disks.hdd': '', 'disks.ssd': '', 'disks.nvme': '',
};

describe('quotaRows', () => {
  it('gives each limit its usage, limit, default-ness and whether it is reached', () => {
    expect(quotaRows(quota).map((r) => [r.name, r.used, r.limit, r.isDefault, r.full])).toEqual([
      ['clusters', 3, 10, true, false],
      ['cpus', 0.3, 4, false, false],
      ['mem_mb', 192, 65536, true, false],
      ['floating_ips', 3, 3, false, true],
      ['disks.hdd', 2, 2, false, true],
      ['disks.ssd', 0, 16, true, false],
      ['disks.nvme', 0, 16, true, false],
    ]);
    expect(quotaRows(quota).map((r) => r.label)).toContain('Disks (hdd)');
  });
});

describe('fieldsOf and updateOf', () => {
  it("leave the defaults empty and send only the user's own limits", () => {
    const fields = fieldsOf(quota);
    expect(fields).toEqual({ ...empty, cpus: '4', floating_ips: '3', 'disks.hdd': '2' });
    expect(updateOf(fields)).toEqual({ update: { cpus: 4, floating_ips: 3, disks: { hdd: 2 } } });
  });

  it.each([
    [{ ...empty }, { update: {} }],
    [{ ...empty, cpus: ' 2.5 ', 'disks.ssd': '0' }, { update: { cpus: 2.5, disks: { ssd: 0 } } }],
    [{ ...empty, clusters: '1.5' }, { problems: { clusters: 'a whole number from 0' } }],
    [{ ...empty, cpus: '-1', floating_ips: 'many' }, { problems: { cpus: 'a number from 0', floating_ips: 'a whole number from 0' } }],
    [{ ...empty, mem_mb: '4294967296' }, { problems: { mem_mb: 'a whole number from 0' } }],
  ])('turns %j into %j', (fields, expected) => {
    expect(updateOf(fields)).toEqual(expected);
  });
});
