/** A server-sent event stream the test writes to: `response` is what a stubbed `fetch` returns. */
export function sseResponse(signal?: AbortSignal | null) {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  signal?.addEventListener('abort', () => {
    if (open) controller.error(new DOMException('aborted', 'AbortError'));
    open = false;
  });
  const write = (text: string) => {
    if (open) controller.enqueue(encoder.encode(text));
  };
  return {
    response: new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }),
    /** One event: `event: <name>`, its JSON data, and `id` when given. */
    send(name: string, data: unknown, id?: number) {
      write(`${id === undefined ? '' : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    comment(text = 'keep-alive') {
      write(`: ${text}\n\n`);
    },
    /** The server closes the stream (after an `end`, or dropping it). */
    close() {
      if (open) controller.close();
      open = false;
    },
  };
}

export type SseStream = ReturnType<typeof sseResponse>;
