import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UnavailableError } from '../core/errors.js';
import { readEvents, type StoredEvent } from '../jobs/events.js';
import type { EventHub, Subscription } from '../jobs/hub.js';

export interface SseMessage {
  /** Omitted: an unnamed message (EventSource `onmessage`). */
  event?: string;
  data: unknown;
}

export interface SseOptions {
  hub: EventHub;
  em: () => EntityManager;
  stream: string;
  heartbeatMs: number;
  /** `comment` sends `: ping`; `event` sends a named `ping` event (the recipe queue stream wants one). */
  heartbeat?: 'comment' | 'event';
  /** Messages sent first, e.g. the job's current state. They carry the stream position as their id. */
  initial?: () => Promise<SseMessage[]>;
  /** How a stored event is sent; null skips it (its id still advances the client's position). */
  format?: (e: StoredEvent) => SseMessage | null;
  /** Close the stream after this event (e.g. the job finished). */
  endAfter?: (e: StoredEvent) => boolean;
  /** Close right after the initial messages and replay (e.g. the job had already finished); a function is asked then. */
  endAtOnce?: boolean | (() => boolean);
  /** Events a slow client may fall behind by before it is disconnected (it resumes with Last-Event-ID). */
  maxBacklog?: number;
}

/** The client's position: `Last-Event-ID` (set by EventSource on reconnect), or `?lastEventId=` for other clients. */
export function lastEventId(ctx: Context): number | undefined {
  const raw = ctx.get('Last-Event-ID') || (typeof ctx.query.lastEventId === 'string' ? ctx.query.lastEventId : '');
  const n = Number(raw);
  return raw !== '' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function frame(id: number, m: SseMessage): string {
  return `id: ${id}\n${m.event ? `event: ${m.event}\n` : ''}data: ${JSON.stringify(m.data)}\n\n`;
}

/**
 * Streams one event stream as server-sent events. It subscribes before it reads history, then replays what the
 * client missed after Last-Event-ID and drops live events it already sent, so a reconnecting client gets every
 * event exactly once. Every message has an id (the stream's seq); writes wait for `drain`; heartbeats keep proxies
 * from closing an idle stream; everything is released when either side closes.
 */
export async function streamEvents(ctx: Context, o: SseOptions): Promise<void> {
  if (!o.hub.ready) throw new UnavailableError('The progress broadcaster is not initialised', 'BROADCASTER_UNAVAILABLE');
  const res = ctx.res;
  const format = o.format ?? ((e: StoredEvent) => ({ event: e.event, data: e.data }));
  const maxBacklog = o.maxBacklog ?? 1000;
  const backlog: StoredEvent[] = [];
  let lastSent = -1;
  let live = false;
  let pumping = false;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  let sub: Subscription | undefined;

  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    sub?.close();
    if (!res.writableEnded) res.end();
  };

  const write = async (chunk: string): Promise<void> => {
    if (closed) return;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  };

  const send = async (e: StoredEvent): Promise<void> => {
    if (e.seq <= lastSent) return; // already sent during replay
    lastSent = e.seq;
    const m = format(e);
    if (m) await write(frame(e.seq, m));
    else await write(`id: ${e.seq}\n\n`); // keeps the client's position moving
    if (o.endAfter?.(e)) close();
  };

  const pump = async (): Promise<void> => {
    if (pumping || !live) return;
    pumping = true;
    try {
      while (backlog.length && !closed) await send(backlog.shift()!);
    } finally {
      pumping = false;
    }
  };

  sub = await o.hub.subscribe(
    o.stream,
    (e) => {
      if (closed) return;
      backlog.push(e);
      // A client this far behind reconnects and replays from the database instead of growing our memory.
      if (backlog.length > maxBacklog) close();
      else void pump();
    },
    close,
  );
  ctx.req.on('close', close);
  res.on('close', close);

  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();

  try {
    const from = lastEventId(ctx);
    const cursor = sub.cursor;
    const position = from ?? cursor;
    for (const m of (await o.initial?.()) ?? []) await write(frame(position, m));
    if (from !== undefined) {
      lastSent = from;
      for (;;) {
        const page = await readEvents(o.em(), o.stream, lastSent);
        for (const e of page) await send(e);
        if (page.length < 500 || closed) break;
      }
    } else {
      lastSent = cursor;
    }
    live = true;
    await pump();
    if (typeof o.endAtOnce === 'function' ? o.endAtOnce() : o.endAtOnce) return close();
    heartbeat = setInterval(() => {
      // A named ping repeats the current id, so it never moves the client's position.
      void write(o.heartbeat === 'event' ? `id: ${lastSent}\nevent: ping\ndata: {}\n\n` : ': ping\n\n');
    }, o.heartbeatMs);
  } catch (err) {
    close();
    throw err;
  }
}
