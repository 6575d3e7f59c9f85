import { defineEntity, type InferEntity } from '@mikro-orm/core';

/**
 * The append-only progress log. Every state change of a job writes one row per stream it belongs to, in the same
 * transaction as the change; `seq` increases by one per stream with no gaps, so SSE clients resume exactly
 * with Last-Event-ID. Rows are written with SQL in jobs/events.ts (the sequence needs an atomic upsert), and
 * removed after EVENT_RETENTION_DAYS (jobs/housekeeping.ts).
 */
export const JobEvent = defineEntity({
  name: 'JobEvent',
  tableName: 'job_event',
  properties: (p) => ({
    stream: p.string().primary(),
    seq: p.bigint('number').primary(),
    event: p.string(),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().defaultRaw('now()'),
  }),
  primaryKeys: ['stream', 'seq'],
  indexes: [{ name: 'job_event_created_at_index', properties: ['createdAt'] }],
});
export type JobEvent = InferEntity<typeof JobEvent>;

/** The last sequence number handed out per stream; its row lock orders concurrent writers of one stream. */
export const EventStream = defineEntity({
  name: 'EventStream',
  tableName: 'event_stream',
  properties: (p) => ({
    name: p.string().primary(),
    lastSeq: p.bigint('number'),
  }),
});
export type EventStream = InferEntity<typeof EventStream>;
