import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from '../core/log.js';
import { TEXT_ARRAY, textArray } from '../db/sql.js';
import { EVENTS_CHANNEL, lastSeq, readEvents, type StoredEvent } from './events.js';

export type EventListener = (event: StoredEvent) => void;

interface StreamState {
  /** Highest seq delivered to this process's listeners. */
  cursor: number;
  listeners: Set<EventListener>;
  /** A fetch is running; `dirty` asks it to run once more when it ends. */
  fetching: boolean;
  dirty: boolean;
}

export interface Subscription {
  /** The stream's last seq when the subscription started: everything after it reaches the listener. */
  readonly cursor: number;
  close(): void;
}

/**
 * One per API process: a dedicated LISTEN connection turns NOTIFYs into in-process deliveries, read from the
 * events table in seq order. NOTIFYs sent while the connection is down are lost, so after a reconnect every
 * subscribed stream is re-read from its cursor: listeners see each event once, in order, with no gap. Nothing
 * depends on a NOTIFY alone: every `pollMs` one query compares each subscribed stream's last seq with its cursor
 * and reads what a lost notification would have announced (docs/jobs.md, "Progress and events").
 */
export class EventHub {
  private client: pg.Client | undefined;
  private readonly streams = new Map<string, StreamState>();
  private readonly endHandlers = new Set<() => void>();
  private closed = false;
  private reconnectDelayMs = 250;
  private connecting: Promise<void> | undefined;
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  ready = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly fork: () => EntityManager,
    private readonly log: Logger,
    /** How often subscribed streams are checked for events whose NOTIFY never arrived; 0: never. */
    private readonly pollMs = 5000,
  ) {}

  async start(): Promise<void> {
    await this.connect();
    if (this.pollMs > 0) {
      this.poller = setInterval(() => void this.poll(), this.pollMs);
      this.poller.unref();
    }
  }

  /** The fallback for a missed NOTIFY: one query for every subscribed stream, and a fetch for those that moved. */
  private async poll(): Promise<void> {
    if (this.polling || this.closed || !this.streams.size) return;
    this.polling = true;
    try {
      const names = [...this.streams.keys()];
      const rows: { name: string; last_seq: string }[] = await this.fork().execute(
        `select name, last_seq from event_stream where name = any(${TEXT_ARRAY})`,
        [textArray(names)],
      );
      for (const r of rows) {
        const state = this.streams.get(r.name);
        if (state && Number(r.last_seq) > state.cursor) this.schedule(r.name);
      }
    } catch (err) {
      this.log.debug('event poll failed; will try again', { error: (err as Error).message });
    } finally {
      this.polling = false;
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('notification', (msg) => this.onNotification(msg.payload));
    client.on('error', (err) => this.onDisconnect(client, err));
    client.on('end', () => this.onDisconnect(client));
    await client.connect();
    await client.query(`listen ${EVENTS_CHANNEL}`);
    this.client = client;
    this.ready = true;
    this.reconnectDelayMs = 250;
    // Catch up on whatever was committed while nobody listened.
    for (const stream of this.streams.keys()) this.schedule(stream);
  }

  private onDisconnect(client: pg.Client, err?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.ready = false;
    this.log.warn('event listener disconnected; reconnecting', { error: err?.message ?? 'connection ended' });
    client.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    if (this.connecting || this.closed) return;
    this.connecting = (async () => {
      while (!this.closed && !this.client) {
        await new Promise((r) => setTimeout(r, this.reconnectDelayMs));
        this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 5000);
        try {
          await this.connect();
          this.log.info('event listener reconnected');
        } catch (err) {
          this.log.warn('event listener reconnect failed', { error: (err as Error).message });
        }
      }
    })().finally(() => {
      this.connecting = undefined;
    });
  }

  private onNotification(payload: string | undefined): void {
    if (!payload) return;
    let note: { s?: string; q?: number };
    try {
      note = JSON.parse(payload);
    } catch {
      return;
    }
    const state = note.s === undefined ? undefined : this.streams.get(note.s);
    if (state && typeof note.q === 'number' && note.q > state.cursor) this.schedule(note.s!);
  }

  /** Reads and delivers a stream's new events; one fetch per stream at a time. */
  private schedule(stream: string): void {
    const state = this.streams.get(stream);
    if (!state) return;
    if (state.fetching) {
      state.dirty = true;
      return;
    }
    state.fetching = true;
    void (async () => {
      try {
        do {
          state.dirty = false;
          for (;;) {
            const events = await readEvents(this.fork(), stream, state.cursor);
            for (const event of events) {
              state.cursor = event.seq;
              for (const listener of [...state.listeners]) listener(event);
            }
            if (events.length < 500) break;
          }
        } while (state.dirty && this.streams.get(stream) === state);
      } catch (err) {
        this.log.warn('event fetch failed; will retry on the next notification or poll', {
          stream,
          error: (err as Error).message,
        });
      } finally {
        state.fetching = false;
      }
    })();
  }

  /**
   * Subscribes before any replay: the caller reads history up to `cursor` itself, the hub delivers the rest. A
   * NOTIFY for an event committed after `cursor` was read may arrive while that read is in flight, before the
   * stream is known here, and be dropped: so a new stream is read once right away.
   */
  async subscribe(stream: string, listener: EventListener, onEnd?: () => void): Promise<Subscription> {
    let state = this.streams.get(stream);
    if (!state) {
      const cursor = await lastSeq(this.fork(), stream);
      // Another subscriber may have created it while we awaited.
      state = this.streams.get(stream);
      if (!state) {
        state = { cursor, listeners: new Set(), fetching: false, dirty: false };
        this.streams.set(stream, state);
        this.schedule(stream);
      }
    }
    state.listeners.add(listener);
    if (onEnd) this.endHandlers.add(onEnd);
    const s = state;
    return {
      cursor: s.cursor,
      close: () => {
        if (onEnd) this.endHandlers.delete(onEnd);
        s.listeners.delete(listener);
        if (s.listeners.size === 0 && this.streams.get(stream) === s) this.streams.delete(stream);
      },
    };
  }

  get subscriberCount(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.listeners.size;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ready = false;
    clearInterval(this.poller);
    this.streams.clear();
    // Open streams end now, so an HTTP server shutting down is not held open by them.
    for (const end of [...this.endHandlers]) end();
    this.endHandlers.clear();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** For tests: drop the LISTEN connection as a network failure would. */
  async simulateDisconnect(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.onDisconnect(client, new Error('simulated disconnect'));
  }
}
