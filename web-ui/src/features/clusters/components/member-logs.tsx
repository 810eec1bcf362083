import { useEffect, useState } from 'react';

import { ErrorAlert } from '@/components/ui/error-alert';
import type { Member } from '@/lib/api/types';
import { readEventStream } from '@/lib/event-stream';

import { clusterPath, type ClusterAddress } from '../lib/cluster';

// Lines kept on the page while following (the oldest go first).
const KEEP = 2000;

/** A member's log, live: its last 200 lines, then each new one as the member writes it. */
export function MemberLogs({ address, members }: { address: ClusterAddress; members: Member[] }) {
  const placed = members.filter((m) => m.node);
  const [member, setMember] = useState(placed[0]?.member_id ?? '');
  if (placed.length === 0) return <p>No member runs on a node now.</p>;
  const path = `${clusterPath(address)}/members/${member}/logs?follow=true&tail=200`;
  return (
    <div>
      <label>
        Member{' '}
        <select value={member} onChange={(e) => setMember(e.target.value)} aria-label="member for logs">
          {placed.map((m) => (
            <option key={m.member_id} value={m.member_id}>{m.member_id}</option>
          ))}
        </select>
      </label>
      {/* another member is another stream, from an empty page */}
      <LogStream key={path} path={path} member={member} />
    </div>
  );
}

function LogStream({ path, member }: { path: string; member: string }) {
  const [lines, setLines] = useState<string[]>([]);
  const [ended, setEnded] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    readEventStream(path, (message) => {
      if (message.event === 'line') setLines((seen) => [...seen, JSON.parse(message.data) as string].slice(-KEEP));
      else if (message.event === 'end') setEnded(true);
      else if (message.event === 'error') setError(new Error((JSON.parse(message.data) as { message: string }).message));
    }, abort.signal).catch((e: unknown) => {
      if (!abort.signal.aborted) setError(e instanceof Error ? e : new Error(String(e)));
    });
    return () => abort.abort();
  }, [path]);
  return (
    <>
      {error && <ErrorAlert title="The log stream stopped" error={error} />}
      <pre className="logs" role="region" aria-label={`live logs of ${member}`} data-ended={ended}>
        {lines.join('\n')}
      </pre>
      {ended && <p className="muted">The member&apos;s container ended.</p>}
    </>
  );
}
