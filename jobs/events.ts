import type { EntityManager } from '@mikro-orm/postgresql';

/** The Postgres channel that carries `{s: stream, q: seq}` for every committed event. */
export const EVENTS_CHANNEL = 'gristmill_events';

export interface StoredEvent {
  stream: string;
  seq: number;
  event: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Appends one event to each of `streams`, inside the caller's transaction, and queues a NOTIFY that Postgres
 * delivers only on commit. The per-stream counter row stays locked until commit, so a stream's events commit in
 * sequence order with no gap: a reader that has seen seq N can safely ask for "after N".
 */
export async function appendEvent(
  em: EntityManager,
  streams: readonly string[],
  event: string,
  data: Record<string, unknown>,
): Promise<{ stream: string; seq: number }[]> {
  if (!em.isInTransaction()) throw new Error('appendEvent must run inside the transaction of the change it reports');
  // Sorted so that two writers lock shared stream counters in the same order (no deadlock).
  const names = [...new Set(streams)].sort();
  const rows: { stream: string; seq: string }[] = await em.execute(
    `with bumped as (
       insert into event_stream (name, last_seq)
       select name, 1 from json_array_elements_text(?::json) with ordinality as s(name, ord) order by ord
       on conflict (name) do update set last_seq = event_stream.last_seq + 1
       returning name, last_seq
     ), inserted as (
       insert into job_event (stream, seq, event, data)
       select name, last_seq, ?, ?::jsonb from bumped
       returning stream, seq
     )
     select stream, seq, pg_notify(?, json_build_object('s', stream, 'q', seq)::text) from inserted`,
    [JSON.stringify(names), event, JSON.stringify(data), EVENTS_CHANNEL],
  );
  return rows.map((r) => ({ stream: r.stream, seq: Number(r.seq) }));
}

interface EventRow {
  stream: string;
  seq: string;
  event: string;
  data: Record<string, unknown>;
  created_at: Date;
}

const toEvent = (r: EventRow): StoredEvent => ({
  stream: r.stream,
  seq: Number(r.seq),
  event: r.event,
  data: r.data,
  createdAt: r.created_at,
});

/** Events of one stream after `afterSeq`, oldest first. */
export async function readEvents(
  em: EntityManager,
  stream: string,
  afterSeq: number,
  limit = 500,
): Promise<StoredEvent[]> {
  const rows: EventRow[] = await em.execute(
    'select stream, seq, event, data, created_at from job_event where stream = ? and seq > ? order by seq limit ?',
    [stream, afterSeq, limit],
  );
  return rows.map(toEvent);
}

/** The last sequence number of a stream (0 when it has none yet). */
export async function lastSeq(em: EntityManager, stream: string): Promise<number> {
  const rows: { last_seq: string }[] = await em.execute('select last_seq from event_stream where name = ?', [stream]);
  return rows[0] ? Number(rows[0].last_seq) : 0;
}
