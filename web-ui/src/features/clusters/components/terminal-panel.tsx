import './terminal-panel.css';

import { lazy, Suspense } from 'react';

import { LoadingState } from '@/components/ui/loading-state';

import type { ClusterAddress } from '../lib/cluster';
import { terminalUrl } from '../lib/terminal';

// xterm.js is loaded when a terminal is first opened, not with the page.
const MemberTerminal = lazy(() => import('./member-terminal').then((m) => ({ default: m.MemberTerminal })));

/** The terminal of one member on the cluster page, until closed (closing it ends the session). */
export function TerminalPanel({ address, member, onClose }: { address: ClusterAddress; member: string; onClose: () => void }) {
  const url = terminalUrl(window.location, address, member);
  return (
    <section className="terminal-panel" aria-label={`terminal panel of ${member}`}>
      <div className="terminal-panel__header">
        <h2>
          Terminal <span className="table__mono">{member}</span>
        </h2>
        <button type="button" className="button button--small" onClick={onClose}>
          Close terminal
        </button>
      </div>
      <p className="muted">
        A shell in the member&apos;s container, as its own user; recorded with the cluster&apos;s commands. It ends after
        15 minutes without input, or after an hour.
      </p>
      {/* another member is another session */}
      <Suspense fallback={<LoadingState label="Loading the terminal…" />}>
        <MemberTerminal key={url} url={url} member={member} />
      </Suspense>
    </section>
  );
}
