export type MemberDisk = {
  container_path: string;
  mount_point: string;
  id?: number;
  device_path?: string;
  disk_class?: string;
  size_bytes?: number;
};

export type Member = {
  member_id: string;
  role: string;
  state: string;
  message?: string;
  node: string | null;
  ip: string | null;
  dns_name: string | null;
  disks: MemberDisk[];
  ports: { name: string; port: number; ui?: boolean }[];
  replacements?: number;
};

export type Cluster = {
  id: string;
  owner: string;
  product: string;
  version: string;
  state: string;
  reason_code: string | null;
  reason: string | null;
  options: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  members: Member[];
};

export type ClusterPage = { items: Cluster[]; next_page_token: string | null };

export type ClusterEvent = { seq: number; at: string; member_id: string | null; step: string; state: string; message: string };

export const CLUSTER_STATES = [
  'PENDING',
  'QUEUED',
  'SCHEDULING',
  'DEPLOYING',
  'CONFIGURING',
  'RUNNING',
  'FAILED',
  'DESTROYING',
  'DESTROYED',
] as const;

/** States after which a cluster changes only when someone acts. */
export const SETTLED_STATES = ['RUNNING', 'FAILED', 'DESTROYED'];

/** The public address of a cluster, as the API has it. */
export function clusterPath(c: Pick<Cluster, 'owner' | 'product' | 'version' | 'id'>): string {
  return `/clusters/${c.owner}/${c.product}/${c.version}/${c.id}`;
}

export type Job = {
  id: string;
  cluster_id: string;
  owner: string;
  state: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'KILLED';
  main: string;
  args: string[];
  files: string[];
  message: string;
  exit_code: number | null;
  ip: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  stdout: string | null;
  stderr: string | null;
};
