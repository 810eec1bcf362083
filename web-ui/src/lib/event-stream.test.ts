import { describe, expect, it } from 'vitest';

import { parseEvents } from './event-stream';

describe('parseEvents', () => {
  it('parses complete events, skips keep-alives and keeps the unfinished rest', () => {
    const text = 'id: 3\nevent: event\ndata: {"seq":3}\n\n: keep-alive\n\nevent: end\ndata: {"state"';
    expect(parseEvents(text)).toEqual({
      events: [{ event: 'event', data: '{"seq":3}', id: '3' }],
      rest: 'event: end\ndata: {"state"',
    });
  });

  it('joins multi-line data and accepts CRLF', () => {
    expect(parseEvents('data: a\r\ndata: b\r\n\r\n').events).toEqual([{ event: 'message', data: 'a\nb' }]);
  });
});
