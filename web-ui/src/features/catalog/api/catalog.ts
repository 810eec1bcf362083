import { apiRequest, jsonBody } from '@/lib/api-client';
import type { Cluster } from '@/features/clusters/api/types';

import type { JsonSchema } from '../lib/schema-form';

export type ProductSummary = { name: string; version: string; description: string; roles: string[]; path: string };

export type RoleSpec = {
  count: { default: number; min: number; max: number };
  cpus: number;
  mem_mb: number;
  disks?: Record<string, number>;
  ports?: { name: string; port: number; ui?: boolean }[];
};

export type Manifest = {
  name: string;
  version: string;
  description: string;
  image: string;
  roles: Record<string, RoleSpec>;
  options_schema: JsonSchema;
};

export type DiskCapacity = { disk_class: string; free: number; total: number };

export type Plan = {
  placeable: boolean;
  summary: string;
  members: { member_id: string; node: string; disks: string[]; cpus: number[] }[];
  reasons: { member_id: string; nodes: { node: string; constraint: string; message: string }[] }[];
};

export function getProducts(): Promise<ProductSummary[]> {
  return apiRequest<{ products: ProductSummary[] }>('/products').then((body) => body.products);
}

export function getProduct(product: string, version: string): Promise<Manifest> {
  return apiRequest<Manifest>(`/products/${encodeURIComponent(product)}/${encodeURIComponent(version)}`);
}

export function getCapacity(): Promise<DiskCapacity[]> {
  return apiRequest<{ disks: DiskCapacity[] }>('/capacity').then((body) => body.disks);
}

export function planLaunch(product: string, version: string, options: unknown): Promise<Plan> {
  return apiRequest<Plan>(`/products/${product}/${version}/plan`, jsonBody('POST', options));
}

export function launchProduct(product: string, version: string, options: unknown): Promise<Cluster> {
  return apiRequest<Cluster>(`/products/${product}/${version}`, jsonBody('POST', options));
}
