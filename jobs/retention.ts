import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../core/log.js';

/** Rows deleted per statement: short transactions, so writers of new events never wait long. */
const BATCH = 5_000;

/**
 * Deletes job events older than `before`, in batches. The per-stream counters are kept, so new events go on
 * numbering after the old ones and a client resuming from a pruned id simply receives what is left. Job rows stay:
 * a job's current state never depended on its events.
 */
export async function pruneEvents(em: EntityManager, before: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const rows: unknown[] = await em.execute(
      `delete from job_event where ctid in (select ctid from job_event where created_at < ? limit ${BATCH}) returning 1`,
      [before],
    );
    total += rows.length;
    if (rows.length < BATCH) return total;
  }
}

/** Prunes events older than `retentionDays` now and then every `intervalMs`; `retentionDays` 0 keeps everything. */
export function startEventPruning(o: { em: () => EntityManager; log: Logger; retentionDays: number; intervalMs: number }): () => Promise<void> {
  if (o.retentionDays <= 0) return async () => {};
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= pruneEvents(o.em(), new Date(Date.now() - o.retentionDays * 86_400_000))
      .then((n) => {
        if (n) o.log.info('pruned old job events', { deleted: n, retentionDays: o.retentionDays });
      })
      .catch((err: Error) => o.log.warn('pruning old job events failed; will try again', { error: err.message }))
      .finally(() => {
        running = undefined;
      });
  };
  run();
  const timer = setInterval(run, o.intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
