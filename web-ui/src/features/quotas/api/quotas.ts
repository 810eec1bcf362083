import { apiRequest } from '@/lib/api-client';
import type { Quota, QuotaUpdate } from '@/lib/api/types';

/** Your usage against your quota. */
export function getMyQuota(): Promise<Quota> {
  return apiRequest<Quota>('/me/quota');
}

/** A user's quota with their usage (admins). */
export function getUserQuota(username: string): Promise<Quota> {
  return apiRequest<Quota>(`/admin/users/${encodeURIComponent(username)}/quota`);
}

/** Set a user's whole quota (admins): a limit left out is the platform's default. */
export function setUserQuota(username: string, limits: QuotaUpdate): Promise<Quota> {
  return apiRequest<Quota>(`/admin/users/${encodeURIComponent(username)}/quota`, {
    method: 'PUT',
    body: JSON.stringify(limits),
  });
}

/** Every quota an admin set, with its usage (admins). */
export function listQuotas(): Promise<Quota[]> {
  return apiRequest<Quota[]>('/admin/quotas');
}
