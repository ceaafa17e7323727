// Reading Server-Sent Events in tests, as a client does: the body read chunk by chunk and parsed
// into events (`id:`, `event:`, JSON `data:`); comments (heartbeats) counted apart.
export interface SseEvent {
  id: number;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON events
  data: any;
}

export interface SseReader {
  /** Reads until `stop` says so (or the stream ends); answers the events read so far. */
  until(stop: (e: SseEvent) => boolean): Promise<SseEvent[]>;
  /** Reads to the end of the stream. */
  all(): Promise<SseEvent[]>;
  /** Reads one chunk of the body; answers the events it completed (null: the stream ended). */
  chunk(): Promise<SseEvent[] | null>;
  events: SseEvent[];
  comments: number;
  /** Goes away, as a client closing its connection. */
  cancel(): Promise<void>;
}

export function sseReader(res: Response): SseReader {
  if (!res.body) throw new Error('no body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const self: SseReader = {
    events: [],
    comments: 0,
    async chunk() {
      const { value, done } = await reader.read();
      if (done) return null;
      buffered += decoder.decode(value, { stream: true });
      const blocks = buffered.split('\n\n');
      buffered = blocks.pop() ?? '';
      const got: SseEvent[] = [];
      for (const block of blocks) {
        if (block.startsWith(':')) {
          self.comments++;
          continue;
        }
        const fields = Object.fromEntries(
          block
            .split('\n')
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
        );
        got.push({
          id: Number(fields.id),
          event: fields.event as string,
          data: JSON.parse(fields.data as string),
        });
      }
      self.events.push(...got);
      return got;
    },
    async until(stop) {
      for (;;) {
        const got = await self.chunk();
        if (got === null || got.some(stop)) return self.events;
      }
    },
    all: () => self.until(() => false),
    cancel: () => reader.cancel(),
  };
  return self;
}
