import { apiRequest, jsonBody } from '@/lib/api-client';
import type { Cluster, ClusterMetrics, ClusterPage, Job, Plan } from '@/lib/api/types';

import { clusterPath, type ClusterAddress } from '../lib/cluster';

export type ClusterFilters = { state?: string; product?: string; pageToken?: string };

function query(filters: ClusterFilters): string {
  const params = new URLSearchParams();
  if (filters.state) params.set('state', filters.state);
  if (filters.product) params.set('product', filters.product);
  if (filters.pageToken) params.set('page_token', filters.pageToken);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function listClusters(username: string, filters: ClusterFilters): Promise<ClusterPage> {
  return apiRequest<ClusterPage>(`/clusters/${encodeURIComponent(username)}${query(filters)}`);
}

export function listAllClusters(filters: ClusterFilters): Promise<ClusterPage> {
  return apiRequest<ClusterPage>(`/admin/clusters${query(filters)}`);
}

export function getCluster(address: ClusterAddress): Promise<Cluster> {
  return apiRequest<Cluster>(clusterPath(address));
}

/** Destroy a cluster; `keep` keeps its members' disks, data and all, as a dataset of yours (named
 * `keep.dataset`, else the cluster's id); `force` deletes it even though other clusters of yours are
 * bound to it (without it, that is a 409 CLUSTER_IN_USE naming them). */
export function deleteCluster(address: ClusterAddress, keep?: { dataset?: string }, force = false): Promise<Cluster> {
  const params = new URLSearchParams();
  if (keep) params.set('keep_disks', 'true');
  if (keep?.dataset) params.set('dataset', keep.dataset);
  if (force) params.set('force', 'true');
  const text = params.toString();
  return apiRequest<Cluster>(`${clusterPath(address)}${text ? `?${text}` : ''}`, jsonBody('DELETE'));
}

/** Stop a running cluster: its containers stop, its disks (with their data) and floating IPs are kept. */
export function stopCluster(address: ClusterAddress): Promise<Cluster> {
  return apiRequest<Cluster>(`${clusterPath(address)}/stop`, jsonBody('POST'));
}

/** Start a stopped cluster again on its kept disks, with its floating IPs. */
export function startCluster(address: ClusterAddress): Promise<Cluster> {
  return apiRequest<Cluster>(`${clusterPath(address)}/start`, jsonBody('POST'));
}

/** Change how many members of each role the running cluster has. */
export function resizeCluster(address: ClusterAddress, roles: Record<string, number>): Promise<Cluster> {
  return apiRequest<Cluster>(`${clusterPath(address)}/resize`, jsonBody('POST', { roles }));
}

/** Where the members a resize adds would go, or why they cannot (nothing is held). */
export function planResize(address: ClusterAddress, roles: Record<string, number>): Promise<Plan> {
  return apiRequest<Plan>(`${clusterPath(address)}/resize/plan`, jsonBody('POST', { roles }));
}

export function listJobs(address: ClusterAddress): Promise<Job[]> {
  return apiRequest<Job[]>(`${clusterPath(address)}/jobs`);
}

export function getJob(address: ClusterAddress, jobId: string): Promise<Job> {
  return apiRequest<Job>(`${clusterPath(address)}/jobs/${jobId}`);
}

/** Per-member figures of the last `minutes`, a point every `step` seconds. */
export function getClusterMetrics(address: ClusterAddress, minutes = 30, step = 15): Promise<ClusterMetrics> {
  return apiRequest<ClusterMetrics>(`${clusterPath(address)}/metrics?minutes=${minutes}&step=${step}`);
}
