import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import { LoadingState } from '@/components/ui/loading-state';
import { DISK_CLASSES, type DiskClass, type DiskState } from '@/lib/api/types';

import { diskAction, getDisks, rediscover, setDiskClass, type DiskAction } from '../api/inventory';

// Which actions the disk state machine allows from each state.
const ACTIONS: Record<DiskState, DiskAction[]> = {
  free: ['retire', 'fail'],
  allocated: ['fail'],
  wiping: ['fail'],
  failed: ['wipe'],
  retired: ['fail'],
};
const ACTION_LABELS: Record<DiskAction, string> = { retire: 'Retire', fail: 'Mark failed', wipe: 'Repair (wipe)' };

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

/** A node's whole disks as tiles coloured by state, with the admin actions each state allows. */
export function DiskMap({ node }: { node: string }) {
  const queryClient = useQueryClient();
  const disks = useQuery({ queryKey: ['disks', node], queryFn: () => getDisks(node), refetchInterval: 3000 });
  const [selected, setSelected] = useState<number | null>(null);
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['disks', node] });
    void queryClient.invalidateQueries({ queryKey: ['capacity'] });
  };
  const act = useMutation({ mutationFn: ({ id, action }: { id: number; action: DiskAction }) => diskAction(id, action), onSuccess: refresh });
  const reclass = useMutation({ mutationFn: ({ id, c }: { id: number; c: DiskClass }) => setDiskClass(id, c), onSuccess: refresh });
  const discover = useMutation({ mutationFn: () => rediscover(node), onSuccess: refresh });

  if (disks.isPending) return <LoadingState label={`Loading the disks of ${node}…`} />;
  if (disks.isError) return <ErrorAlert title={`Could not load the disks of ${node}`} error={disks.error} />;
  const disk = disks.data.find((d) => d.id === selected);
  return (
    <div>
      <div className="disk-map" role="list" aria-label={`disks of ${node}`}>
        {disks.data.map((d) => (
          <button
            key={d.id}
            type="button"
            role="listitem"
            className={`disk-tile disk-tile--${d.state}${d.id === selected ? ' disk-tile--selected' : ''}`}
            aria-label={`disk ${d.device_path} ${d.disk_class} ${d.state}`}
            data-state={d.state}
            onClick={() => setSelected(d.id)}
          >
            <strong>{d.device_path}</strong>
            <span>
              {d.disk_class} · {gib(d.size_bytes)}
            </span>
            <span>{d.state}</span>
            {d.owner && <span className="table__mono">{d.owner}</span>}
          </button>
        ))}
      </div>
      <p className="legend muted">free · allocated (to the member shown) · wiping · failed · retired</p>
      <button type="button" className="button" onClick={() => discover.mutate()} disabled={discover.isPending}>
        {discover.isPending ? 'Discovering…' : `Re-discover ${node}`}
      </button>
      {disk && (
        <div className="panel" aria-label="disk actions">
          <p>
            <strong>{disk.device_path}</strong> ({disk.mount_point}) is <strong>{disk.state}</strong>
            {disk.state_reason ? ` — ${disk.state_reason}` : ''}
          </p>
          <label>
            Class{' '}
            <select value={disk.disk_class} onChange={(e) => reclass.mutate({ id: disk.id, c: e.target.value as DiskClass })}>
              {DISK_CLASSES.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>{' '}
          {ACTIONS[disk.state].map((action) => (
            <button key={action} type="button" className="button" onClick={() => act.mutate({ id: disk.id, action })}>
              {ACTION_LABELS[action]}
            </button>
          ))}
        </div>
      )}
      {[act, reclass, discover].map((m, i) => m.isError && <ErrorAlert key={i} title="The change was refused" error={m.error} />)}
    </div>
  );
}
