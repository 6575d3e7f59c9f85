import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { type Config, type QueueName, taskQueue } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { JobKind } from './kinds.js';
import { ensureSchedule } from './schedules.js';

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

/** The housekeeping schedule's id (after the deployment's prefix): every hour, housekeepingWorkflow runs the chores. */
export const housekeepingScheduleId = (config: Pick<Config, 'taskQueuePrefix'>) => `${config.taskQueuePrefix}housekeeping`;

/**
 * Puts the hourly chores on a Temporal Schedule (workflows/housekeeping.ts), run once when it is created too. `queue`
 * is any task queue: every worker has the shared activities the chores run in.
 */
export async function ensureHousekeepingSchedule(client: Client, config: Config, queue: QueueName): Promise<void> {
  await ensureSchedule(client, {
    scheduleId: housekeepingScheduleId(config),
    every: '1 hour',
    workflowType: 'housekeepingWorkflow',
    taskQueue: taskQueue(config, queue),
    args: [],
    runAtCreation: true,
  });
}

/**
 * The hourly chores: job events older than EVENT_RETENTION_DAYS go, then each job kind tidies what it owns
 * (JobKind.housekeeping). A chore that fails is logged and tried again next time; it never stops the others.
 */
export async function runHousekeeping(o: { em: () => EntityManager; config: Config; log: Logger; kinds: readonly JobKind[] }): Promise<{ failed: string[] }> {
  const chores: [string, () => Promise<void>][] = [];
  const days = o.config.eventRetentionDays;
  if (days > 0) {
    chores.push([
      'pruning old job events',
      async () => {
        const n = await pruneEvents(o.em(), new Date(Date.now() - days * 86_400_000));
        if (n) o.log.info('pruned old job events', { deleted: n, retentionDays: days });
      },
    ]);
  }
  for (const kind of o.kinds) {
    const chore = kind.housekeeping;
    if (chore) chores.push([`${kind.name} housekeeping`, () => chore({ em: o.em(), config: o.config, log: o.log })]);
  }
  const failed: string[] = [];
  for (const [name, chore] of chores) {
    await chore().catch((err: Error) => {
      failed.push(name);
      o.log.warn(`${name} failed; will try again`, { error: err.message });
    });
  }
  return { failed };
}
