/** One server-sent event, as the EventSource specification dispatches it. */
export interface SseEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  /** The last event id seen so far (what a reconnect sends as Last-Event-ID). */
  lastEventId: string | undefined;
}

/**
 * An incremental parser of `text/event-stream` (the HTML specification's rules): feed it text as it arrives, get
 * the complete events back. Pure, so it is tested without a browser; the fetch-based client in api.ts uses it
 * because EventSource cannot send an Authorization header.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  /** The id of the message being received; it becomes `lastEventId` only once the message is complete. */
  private idBuffer: string | undefined;
  lastEventId: string | undefined;

  /** A new connection: whatever was half-received is dropped; the last complete message's id is what resumes. */
  reset(): void {
    this.buffer = '';
    this.data = [];
    this.event = '';
    this.idBuffer = this.lastEventId;
  }

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const e = this.line(line);
      if (e) out.push(e);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      // A blank line dispatches; an event without data lines dispatches nothing (its id still counts).
      this.lastEventId = this.idBuffer;
      const e = this.data.length ? { event: this.event || 'message', data: this.data.join('\n'), lastEventId: this.lastEventId } : undefined;
      this.data = [];
      this.event = '';
      return e;
    }
    if (line.startsWith(':')) return undefined; // a comment (heartbeat)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.idBuffer = value;
    return undefined;
  }
}
