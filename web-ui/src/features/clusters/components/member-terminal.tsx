import '@xterm/xterm/css/xterm.css';

import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';

import { getToken } from '@/lib/session';

import {
  binaryInputFrame,
  endedDescription,
  inputFrame,
  parseServerMessage,
  resizeMessage,
  terminalProtocols,
  type TerminalEnd,
} from '../lib/terminal';

type Status = { state: 'connecting' | 'open' | 'ended'; text: string };

/** The subprotocols to offer, or why there are none (no token that can be sent). */
function offeredProtocols(): string[] | Error {
  try {
    return terminalProtocols(getToken());
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** An interactive shell in a member (xterm.js over the API's terminal WebSocket), its size following
 * the panel's; the session's end said below it. Loaded on demand (terminal-panel.tsx). */
export function MemberTerminal({ url, member }: { url: string; member: string }) {
  const screen = useRef<HTMLDivElement>(null);
  const [protocols] = useState(offeredProtocols);
  const [status, setStatus] = useState<Status>(
    protocols instanceof Error ? { state: 'ended', text: protocols.message } : { state: 'connecting', text: 'Connecting…' },
  );

  useEffect(() => {
    const element = screen.current;
    if (!element || protocols instanceof Error) return;
    const term = new Terminal({ cursorBlink: true, fontSize: 13, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    const socket = new WebSocket(url, protocols);
    socket.binaryType = 'arraybuffer';
    let opened = false;
    let end: TerminalEnd | null = null;
    const send = (frame: string | Uint8Array) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(frame);
    };
    const fitAndResize = () => {
      fit.fit();
      const message = resizeMessage(term.cols, term.rows);
      if (message) send(message);
    };
    socket.onopen = () => {
      opened = true;
      setStatus({ state: 'open', text: 'Connected.' });
      fitAndResize();
      term.focus();
    };
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data !== 'string') {
        term.write(new Uint8Array(event.data));
        return;
      }
      const message = parseServerMessage(event.data);
      if (message.kind === 'end') end = message.end;
      else if (message.kind === 'error') term.write(`\r\n\x1b[31m[${message.code}: ${message.message}]\x1b[0m\r\n`);
    };
    socket.onclose = (event) => {
      setStatus({ state: 'ended', text: endedDescription(end, opened, event.code) });
    };
    const typed = term.onData((data) => send(inputFrame(data)));
    const binary = term.onBinary((data) => send(binaryInputFrame(data)));
    const observer = new ResizeObserver(() => fitAndResize());
    observer.observe(element);
    return () => {
      observer.disconnect();
      typed.dispose();
      binary.dispose();
      socket.onclose = null;
      socket.close();
      term.dispose();
    };
  }, [url, protocols]);

  return (
    <div>
      <div ref={screen} className="terminal" role="region" aria-label={`terminal of ${member}`} data-state={status.state} />
      <p className={status.state === 'ended' ? 'terminal__status terminal__status--ended' : 'terminal__status muted'}
        role="status">
        {status.text}
      </p>
    </div>
  );
}
