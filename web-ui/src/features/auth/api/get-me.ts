import { apiRequest } from '@/lib/api-client';

export type Me = { username: string; is_admin: boolean };

export function getMe(): Promise<Me> {
  return apiRequest<Me>('/me');
}
