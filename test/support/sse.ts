import http from 'node:http';

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A minimal event-stream client that records every frame, comments included, as a browser would parse them. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  ended = false;
  private req: http.ClientRequest | undefined;
  private waiters: (() => void)[] = [];

  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    return new Promise((resolve, reject) => {
      c.req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf('\n\n')) !== -1) {
            c.frames.push(parse(buf.slice(0, i)));
            buf = buf.slice(i + 2);
          }
          c.wake();
        });
        res.on('end', () => {
          c.ended = true;
          c.wake();
        });
        res.on('error', () => undefined);
        resolve(c);
      });
      c.req.on('error', reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Frames that are events (have data), not heartbeats. */
  get events(): SseFrame[] {
    return this.frames.filter((f) => f.data !== undefined && f.event !== 'ping');
  }

  async waitFor(pred: (c: SseClient) => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (Date.now() > deadline) throw new Error(`SSE wait timed out; frames: ${JSON.stringify(this.frames)}`);
      if (this.ended && !pred(this)) throw new Error(`SSE stream ended; frames: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  close(): void {
    this.req?.destroy();
  }
}

function parse(block: string): SseFrame {
  const f: SseFrame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) f.comment = line.slice(1).trim();
    else {
      const at = line.indexOf(':');
      const key = at === -1 ? line : line.slice(0, at);
      const value = at === -1 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (key === 'id' || key === 'event') f[key] = value;
      if (key === 'data') f.data = f.data === undefined ? value : `${f.data}\n${value}`;
    }
  }
  return f;
}
