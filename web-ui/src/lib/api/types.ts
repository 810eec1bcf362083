// The API's shapes under the names the UI uses, taken from the types generated from the
// api-server's OpenAPI document (schema.gen.ts, made by scripts/gen-clients). Nothing here is
// written by hand but the names: when the API renames a schema, only this module changes.
import { clusterStateValues, diskClassValues, type components } from './schema.gen';

type Schemas = components['schemas'];

// --- clusters
export type Cluster = Schemas['ClusterView'];
export type ClusterState = Schemas['ClusterState'];
export type ClusterPage = Schemas['ClusterPage'];
export type Member = Schemas['MemberView'];
export type MemberState = Schemas['MemberState'];
export type MemberDisk = Schemas['HeldDisk'];
export type Port = Schemas['PortSpec'];
export type ClusterEvent = Schemas['EventView'];
export type ClusterMetrics = Schemas['ClusterMetrics'];
export type MetricSeries = Schemas['MetricSeries'];
/** Every cluster state the API documents (a newer server may send others: show them as they are). */
export const CLUSTER_STATES: readonly ClusterState[] = clusterStateValues;

export type Dataset = Schemas['DatasetView'];

// --- jobs
export type Job = Schemas['Job'];
export type JobState = Job['state'];

// --- catalog
export type ProductCatalog = Schemas['ProductCatalog'];
export type ProductSummary = Schemas['ProductSummary'];
export type Manifest = Schemas['Manifest'];
export type RoleManifest = Schemas['RoleManifest'];
export type Plan = Schemas['Plan'];
export type Capacity = Schemas['Capacity'];
export type DiskCapacity = Schemas['DiskClassCapacity'];
export type DiskClass = Schemas['DiskClass'];
export const DISK_CLASSES: readonly DiskClass[] = diskClassValues;

// --- users, platform
export type Me = Schemas['UserOut'];
export type PlatformStatus = Schemas['PlatformStatus'];
export type ServiceStatus = Schemas['ServiceStatus'];
/** Health of a service as Consul reports it; `missing` means no instance is registered. */
export type ServiceHealth = ServiceStatus['status'];

// --- quotas
export type Quota = Schemas['Quota'];
export type QuotaAmounts = Schemas['QuotaAmounts'];
export type QuotaUpdate = Schemas['QuotaUpdate'];

// --- admin
export type Node = Schemas['Node'];
export type NodeUpdate = Schemas['NodeUpdate'];
export type Disk = Schemas['DiskView'];
export type DiskState = Disk['state'];
export type DiskPage = Schemas['DiskPage'];
export type DiscoverResult = Schemas['DiscoverResult'];
export type IpPool = Schemas['IpPool'];
export type NodeMetrics = Schemas['NodeMetrics'];
export type NodeSeries = Schemas['NodeSeries'];

// --- errors
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
