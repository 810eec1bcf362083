// A member's terminal over a WebSocket (the api-server's …/members/{member}/terminal), as
// spindle_common/terminal.py defines its frames: binary frames carry the shell's input and output,
// text frames JSON (a resize from us; an error or the end from the server).
import type { ClusterState, Member } from '@/lib/api/types';

import { clusterPath, type ClusterAddress } from './cluster';

export const TERMINAL_SUBPROTOCOL = 'spindle.terminal';
export const MIN_SIZE = 1;
export const MAX_SIZE = 1000;

/** Cluster states whose members have containers to open a shell in (as the API's exec states). */
const TERMINAL_STATES: ReadonlySet<string> = new Set<ClusterState>(['DEPLOYING', 'CONFIGURING', 'RUNNING', 'DEGRADED']);

/** Whether a terminal can be opened in `member` of a cluster in `state`: it runs on a node now. */
export function canOpenTerminal(state: string, member: Pick<Member, 'node'>): boolean {
  return TERMINAL_STATES.has(state) && !!member.node;
}

/** The terminal's WebSocket URL on the page's own server (ws: or wss: as the page), never with the token. */
export function terminalUrl(location: Pick<Location, 'protocol' | 'host'>, address: ClusterAddress, member: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${clusterPath(address)}/members/${encodeURIComponent(member)}/terminal`;
}

// What a subprotocol may hold (an RFC 7230 token); API tokens (spd_ + URL-safe base64) are.
const PROTOCOL_TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** The subprotocols to offer: the terminal's, and the API token as `bearer.<token>` (browsers cannot
 * set Authorization on a WebSocket; the server accepts `spindle.terminal` alone, never echoing it). */
export function terminalProtocols(token: string | null): string[] {
  if (!token || !PROTOCOL_TOKEN.test(token)) throw new Error('sign in again: the saved API token cannot be sent');
  return [TERMINAL_SUBPROTOCOL, `bearer.${token}`];
}

/** The control frame for a terminal of `cols` × `rows`; null for a size the server takes not (a
 * hidden terminal measures 0), rather than sending what it would refuse. */
export function resizeMessage(cols: number, rows: number): string | null {
  const ok = (n: number) => Number.isInteger(n) && n >= MIN_SIZE && n <= MAX_SIZE;
  return ok(cols) && ok(rows) ? JSON.stringify({ resize: [cols, rows] }) : null;
}

const encoder = new TextEncoder();

/** Keys typed or text pasted, as the binary frame that carries them (UTF-8). */
export function inputFrame(data: string): Uint8Array {
  return encoder.encode(data);
}

/** xterm's binary input (a string of code points 0–255, e.g. some mouse reports) as its bytes. */
export function binaryInputFrame(data: string): Uint8Array {
  return Uint8Array.from(data, (c) => c.charCodeAt(0) & 0xff);
}

export type TerminalEnd = { exitCode: number | null; reason: string };
export type ServerMessage =
  | { kind: 'end'; end: TerminalEnd }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'unknown' };

/** A text frame of the server's: the session's end, an error, or one this UI does not know. */
export function parseServerMessage(text: string): ServerMessage {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { kind: 'unknown' };
  }
  if (typeof data !== 'object' || data === null) return { kind: 'unknown' };
  if ('exit_code' in data && 'reason' in data && typeof data.reason === 'string') {
    const code = data.exit_code;
    return { kind: 'end', end: { exitCode: typeof code === 'number' ? code : null, reason: data.reason } };
  }
  if ('error' in data && typeof data.error === 'object' && data.error !== null) {
    const { code, message } = data.error as { code?: unknown; message?: unknown };
    return { kind: 'error', code: String(code ?? 'ERROR'), message: String(message ?? '') };
  }
  return { kind: 'unknown' };
}

const REASONS: Record<string, string> = {
  exited: 'the shell exited',
  idle: 'no input for 15 minutes',
  max_duration: 'a session lasts an hour at most',
};

/** What the page says once the WebSocket closed: how the session ended, as far as it is known. */
export function endedDescription(end: TerminalEnd | null, opened: boolean, closeCode: number): string {
  if (end) {
    const code = end.exitCode === null ? '' : `, exit code ${end.exitCode}`;
    return `Session ended: ${REASONS[end.reason] ?? end.reason}${code}.`;
  }
  if (!opened) {
    return 'Session ended: the terminal could not be opened (the member may have stopped, or your sign-in expired).';
  }
  return closeCode === 1000 ? 'Session ended.' : `Session ended: the connection was lost (code ${closeCode}).`;
}
