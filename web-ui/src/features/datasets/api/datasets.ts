import { apiRequest, jsonBody } from '@/lib/api-client';
import type { Dataset } from '@/lib/api/types';

/** `username`'s datasets holding disks (yours; admins: anyone's). */
export function listDatasets(username: string): Promise<Dataset[]> {
  return apiRequest<Dataset[]>(`/datasets/${encodeURIComponent(username)}`);
}

/** Every user's datasets holding disks (admins). */
export function listAllDatasets(): Promise<Dataset[]> {
  return apiRequest<Dataset[]>('/admin/datasets');
}

/** Wipe a kept dataset's disks. */
export function reclaimDataset(username: string, name: string): Promise<Dataset> {
  return apiRequest<Dataset>(`/datasets/${encodeURIComponent(username)}/${encodeURIComponent(name)}`, jsonBody('DELETE'));
}
