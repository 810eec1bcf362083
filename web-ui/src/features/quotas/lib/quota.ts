import { DISK_CLASSES, type DiskClass, type Quota, type QuotaAmounts, type QuotaUpdate } from '@/lib/api/types';

/** A limit's name as the API names it: a resource, or `disks.<class>`. */
export type LimitName = 'clusters' | 'cpus' | 'mem_mb' | 'floating_ips' | `disks.${DiskClass}`;

const SCALARS = ['clusters', 'cpus', 'mem_mb', 'floating_ips'] as const;
export const LIMIT_NAMES: readonly LimitName[] = [...SCALARS, ...DISK_CLASSES.map((c) => `disks.${c}` as const)];

const LABELS: Record<(typeof SCALARS)[number], string> = {
  clusters: 'Clusters',
  cpus: 'CPUs',
  mem_mb: 'Memory (MiB)',
  floating_ips: 'Floating IPs',
};

export function limitLabel(name: LimitName): string {
  return name.startsWith('disks.') ? `Disks (${name.slice('disks.'.length)})` : LABELS[name as (typeof SCALARS)[number]];
}

function amount(amounts: QuotaAmounts, name: LimitName): number {
  return name.startsWith('disks.') ? (amounts.disks[name.slice('disks.'.length)] ?? 0) : amounts[name as (typeof SCALARS)[number]];
}

export type QuotaRow = { name: LimitName; label: string; used: number; limit: number; isDefault: boolean; full: boolean };

/** One row per limit: what is used, the limit, whether it is the platform's default, whether it is reached. */
export function quotaRows(quota: Quota): QuotaRow[] {
  return LIMIT_NAMES.map((name) => {
    const used = amount(quota.usage, name);
    const limit = amount(quota.limits, name);
    return { name, label: limitLabel(name), used, limit, isDefault: quota.defaults.includes(name), full: used >= limit };
  });
}

/** The admin form's fields: each limit as text, empty when it is the platform's default. */
export type LimitFields = Record<LimitName, string>;

export function fieldsOf(quota: Quota): LimitFields {
  const fields = {} as LimitFields;
  for (const name of LIMIT_NAMES) fields[name] = quota.defaults.includes(name) ? '' : String(amount(quota.limits, name));
  return fields;
}

/** The whole quota to PUT from the form (an empty field: the default), or the problems per field. */
export function updateOf(fields: LimitFields): { update: QuotaUpdate } | { problems: Partial<Record<LimitName, string>> } {
  const update: QuotaUpdate = {};
  const disks: Partial<Record<DiskClass, number>> = {};
  const problems: Partial<Record<LimitName, string>> = {};
  for (const name of LIMIT_NAMES) {
    const text = fields[name].trim();
    if (text === '') continue;
    const value = Number(text);
    const integer = name !== 'cpus';
    if (!Number.isFinite(value) || value < 0 || value > 2147483647 || (integer && !Number.isInteger(value))) {
      problems[name] = integer ? 'a whole number from 0' : 'a number from 0';
      continue;
    }
    if (name.startsWith('disks.')) disks[name.slice('disks.'.length) as DiskClass] = value;
    else update[name as (typeof SCALARS)[number]] = value;
  }
  if (Object.keys(problems).length > 0) return { problems };
  if (Object.keys(disks).length > 0) update.disks = disks;
  return { update };
}
