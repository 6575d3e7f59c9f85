import http from 'node:http';

/**
 * An event-stream client that behaves as a browser's EventSource does behind a load balancer: when its connection
 * is cut it reconnects (to whichever replica the proxy picks) with `Last-Event-ID`, and it records every event id
 * it was sent, so a test can compare them with the events stored. A stream the server ends cleanly (a finished
 * job's) is not reopened.
 */
export class SseFollower {
  /** Event ids received (heartbeats and the messages that repeat the position at each connection left out). */
  readonly ids: number[] = [];
  /** Each connection: the upstream the proxy chose, when it opened, the position it resumed from. */
  readonly connections: { upstream: string; at: number; from: number }[] = [];
  lastId: number;
  finished = false;
  private closed = false;
  private req: http.ClientRequest | undefined;

  constructor(
    readonly url: string,
    from: number,
  ) {
    this.lastId = from;
  }

  start(): this {
    this.open();
    return this;
  }

  private open(): void {
    if (this.closed) return;
    const from = this.lastId;
    let buf = '';
    const retry = () => {
      if (!this.closed && !this.finished) setTimeout(() => this.open(), 200);
    };
    this.req = http.get(this.url, { headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(from) } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return retry();
      }
      this.connections.push({ upstream: String(res.headers['x-upstream'] ?? '?'), at: Date.now(), from });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          this.frame(buf.slice(0, i), from);
          buf = buf.slice(i + 2);
        }
      });
      res.on('close', () => {
        if (res.complete) this.finished = true;
        else retry();
      });
    });
    this.req.on('error', retry);
  }

  private frame(block: string, from: number): void {
    let id: number | undefined;
    let event: string | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('id:')) id = Number(line.slice(3).trim());
      if (line.startsWith('event:')) event = line.slice(6).trim();
    }
    if (id === undefined || event === 'ping' || id <= from) return;
    this.ids.push(id);
    this.lastId = Math.max(this.lastId, id);
  }

  /** Stored ids it never received, and ids it received more than once. */
  compare(stored: number[]): { lost: number[]; duplicated: number[] } {
    const got = new Set(this.ids);
    const seen = new Set<number>();
    const duplicated = this.ids.filter((id) => seen.has(id) || !seen.add(id));
    return { lost: stored.filter((id) => !got.has(id)), duplicated };
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }
}
