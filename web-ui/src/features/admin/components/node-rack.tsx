import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import type { Node } from '@/lib/api/types';

import { setNodeRack } from '../api/inventory';

/**
 * A node's rack, its failure domain (no rack: the node itself), which placement spreads a cluster's
 * replicas over. An admin sets it, or clears it by saving an empty rack.
 */
export function NodeRack({ node }: { node: Node }) {
  const queryClient = useQueryClient();
  const [rack, setRack] = useState(node.rack ?? '');
  const save = useMutation({
    mutationFn: (wanted: string | null) => setNodeRack(node.name, wanted),
    onSuccess: (saved) => {
      setRack(saved.rack ?? '');
      void queryClient.invalidateQueries({ queryKey: ['nodes'] });
    },
  });
  const shown = save.data ?? node;

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(rack.trim() === '' ? null : rack.trim());
  }

  return (
    <form className="form" onSubmit={submit} aria-label={`rack of ${node.name}`}>
      <p>
        Failure domain: <strong>{shown.failure_domain}</strong>
        {shown.rack === null && <span className="muted"> (no rack: the node itself)</span>}
      </p>
      <div className="form__field">
        <label htmlFor={`rack-${node.name}`}>Rack</label>
        <input
          id={`rack-${node.name}`}
          value={rack}
          placeholder="none (leave empty)"
          onChange={(e) => setRack(e.target.value)}
        />
      </div>
      <div className="form__actions">
        <button type="submit" className="button" disabled={save.isPending}>
          Save
        </button>
      </div>
      {save.isError && <ErrorAlert title={`Could not set the rack of ${node.name}`} error={save.error} />}
    </form>
  );
}
