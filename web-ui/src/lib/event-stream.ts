// Server-sent events over fetch (EventSource cannot send the Authorization header).
import { authHeaders, errorFromResponse } from './api-client';

export type ServerEvent = { event: string; data: string; id?: string };

/** Splits SSE text into events; returns them and the unfinished rest to prepend to the next chunk. */
export function parseEvents(buffer: string): { events: ServerEvent[]; rest: string } {
  const events: ServerEvent[] = [];
  const blocks = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const event: ServerEvent = { event: 'message', data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue; // a comment (keep-alive)
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event.event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') event.id = value;
    }
    if (data.length) events.push({ ...event, data: data.join('\n') });
  }
  return { events, rest };
}

/** Reads the SSE stream at `path` until it ends or `signal` aborts, calling `onEvent` for each event.
 * `lastEventId` resumes a stream after the last event seen (the `Last-Event-ID` header). An error
 * thrown by `onEvent` stops reading and rejects. */
export async function readEventStream(
  path: string,
  onEvent: (event: ServerEvent) => void,
  signal: AbortSignal,
  lastEventId?: string,
) {
  const headers = authHeaders({ Accept: 'text/event-stream' });
  if (lastEventId !== undefined) headers.set('Last-Event-ID', lastEventId);
  const response = await fetch(path, { headers, signal });
  if (!response.ok) throw await errorFromResponse(response);
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const parsed = parseEvents(buffer + value);
      buffer = parsed.rest;
      parsed.events.forEach(onEvent);
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
