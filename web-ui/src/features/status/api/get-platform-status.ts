import { apiRequest } from '@/lib/api-client';
import type { PlatformStatus } from '@/lib/api/types';

/** `GET /status`: the health of every Spindle service. */
export function getPlatformStatus(): Promise<PlatformStatus> {
  return apiRequest<PlatformStatus>('/status');
}
