import { apiRequest, jsonBody } from '@/lib/api-client';

export type Node = { id: number; name: string; [key: string]: unknown };

export type Disk = {
  id: number;
  node: string;
  device_path: string;
  size_bytes: number;
  mount_point: string;
  disk_class: string;
  state: 'free' | 'allocated' | 'wiping' | 'failed' | 'retired';
  state_reason: string | null;
  owner: string | null;
};

export type IpPool = { name: string; cidr: string; floating_cidr: string; driver: string; floating_total: number; floating_used: number };

export type DiskAction = 'retire' | 'fail' | 'wipe';

export function getNodes(): Promise<Node[]> {
  return apiRequest<Node[]>('/admin/nodes');
}

export function getDisks(node: string): Promise<Disk[]> {
  return apiRequest<{ items: Disk[] }>(`/admin/disks?node=${encodeURIComponent(node)}&page_size=1000`).then((p) => p.items);
}

export function getIpPools(): Promise<IpPool[]> {
  return apiRequest<IpPool[]>('/admin/ip-pools');
}

export function diskAction(diskId: number, action: DiskAction): Promise<Disk> {
  return apiRequest<Disk>(`/admin/disks/${diskId}/${action}`, jsonBody('POST', { reason: `${action} from the web UI` }));
}

export function setDiskClass(diskId: number, diskClass: string): Promise<Disk> {
  return apiRequest<Disk>(`/admin/disks/${diskId}`, jsonBody('PATCH', { disk_class: diskClass }));
}

export function rediscover(node: string): Promise<unknown> {
  return apiRequest<unknown>(`/admin/nodes/${encodeURIComponent(node)}/discover`, jsonBody('POST', {}));
}
