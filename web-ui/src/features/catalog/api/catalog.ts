import { apiRequest, jsonBody } from '@/lib/api-client';
import type { Capacity, Cluster, DiskCapacity, Manifest, Plan, ProductCatalog, ProductSummary } from '@/lib/api/types';

export function getProducts(): Promise<ProductSummary[]> {
  return apiRequest<ProductCatalog>('/products').then((body) => body.products);
}

export function getProduct(product: string, version: string): Promise<Manifest> {
  return apiRequest<Manifest>(`/products/${encodeURIComponent(product)}/${encodeURIComponent(version)}`);
}

export function getCapacity(): Promise<DiskCapacity[]> {
  return apiRequest<Capacity>('/capacity').then((body) => body.disks);
}

export function planLaunch(product: string, version: string, options: unknown): Promise<Plan> {
  return apiRequest<Plan>(`/products/${product}/${version}/plan`, jsonBody('POST', options));
}

export function launchProduct(product: string, version: string, options: unknown): Promise<Cluster> {
  return apiRequest<Cluster>(`/products/${product}/${version}`, jsonBody('POST', options));
}
