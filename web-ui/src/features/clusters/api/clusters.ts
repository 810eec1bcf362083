import { apiRequest, jsonBody } from '@/lib/api-client';
import type { Cluster, ClusterMetrics, ClusterPage, Job } from '@/lib/api/types';

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

export function deleteCluster(address: ClusterAddress): Promise<Cluster> {
  return apiRequest<Cluster>(clusterPath(address), jsonBody('DELETE'));
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
