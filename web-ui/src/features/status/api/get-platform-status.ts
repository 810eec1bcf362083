import { apiRequest } from '@/lib/api-client';

/** Health of a service as Consul reports it; `missing` means no instance is registered. */
export type ServiceHealth = 'passing' | 'warning' | 'critical' | 'missing';

export type ServiceStatus = {
  name: string;
  status: ServiceHealth;
  /** `host:port` of every registered instance. */
  instances: string[];
  /** First line of the first failing check's output; empty when all pass. */
  detail: string;
};

export type PlatformStatus = { services: ServiceStatus[] };

/** `GET /status`: the health of every Spindle service. */
export function getPlatformStatus(): Promise<PlatformStatus> {
  return apiRequest<PlatformStatus>('/status');
}
