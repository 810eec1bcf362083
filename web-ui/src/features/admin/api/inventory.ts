import { apiRequest, jsonBody } from '@/lib/api-client';
import type { DiscoverResult, Disk, DiskClass, DiskPage, IpPool, Node, NodeMetrics, NodeUpdate } from '@/lib/api/types';

export type DiskAction = 'retire' | 'fail' | 'wipe';

export function getNodes(): Promise<Node[]> {
  return apiRequest<Node[]>('/admin/nodes');
}

export function getDisks(node: string): Promise<Disk[]> {
  return apiRequest<DiskPage>(`/admin/disks?node=${encodeURIComponent(node)}&page_size=1000`).then((p) => p.items);
}

export function getIpPools(): Promise<IpPool[]> {
  return apiRequest<IpPool[]>('/admin/ip-pools');
}

export function diskAction(diskId: number, action: DiskAction): Promise<Disk> {
  return apiRequest<Disk>(`/admin/disks/${diskId}/${action}`, jsonBody('POST', { reason: `${action} from the web UI` }));
}

export function setDiskClass(diskId: number, diskClass: DiskClass): Promise<Disk> {
  return apiRequest<Disk>(`/admin/disks/${diskId}`, jsonBody('PATCH', { disk_class: diskClass }));
}

/** Put a node in a rack, its failure domain; `null` takes it out (the node is its own failure domain again). */
export function setNodeRack(node: string, rack: NodeUpdate['rack']): Promise<Node> {
  const body: NodeUpdate = { rack };
  return apiRequest<Node>(`/admin/nodes/${encodeURIComponent(node)}`, jsonBody('PATCH', body));
}

export function rediscover(node: string): Promise<DiscoverResult> {
  return apiRequest<DiscoverResult>(`/admin/nodes/${encodeURIComponent(node)}/discover`, jsonBody('POST', {}));
}

/** Per node and disk class: capacity, allocation, use and the wipe queue over the last `minutes`. */
export function getNodeMetrics(minutes = 60, step = 30): Promise<NodeMetrics> {
  return apiRequest<NodeMetrics>(`/admin/metrics?minutes=${minutes}&step=${step}`);
}
