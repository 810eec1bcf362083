import { apiRequest, jsonBody } from '@/lib/api-client';

import { clusterPath, type Cluster, type ClusterPage, type Job } from './types';

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

export function getCluster(address: Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>): Promise<Cluster> {
  return apiRequest<Cluster>(clusterPath(address));
}

export function deleteCluster(address: Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>): Promise<Cluster> {
  return apiRequest<Cluster>(clusterPath(address), jsonBody('DELETE'));
}

export function listJobs(address: Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>): Promise<Job[]> {
  return apiRequest<Job[]>(`${clusterPath(address)}/jobs`);
}

export function getJob(address: Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>, jobId: string): Promise<Job> {
  return apiRequest<Job>(`${clusterPath(address)}/jobs/${jobId}`);
}
