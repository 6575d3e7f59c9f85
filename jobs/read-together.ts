import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs `read` in one read-only, repeatable-read transaction, so all of its queries see the database as of one moment.
 * A job and its service's rows change together (JobStore.update's `within`), but PostgreSQL's default, read committed,
 * gives each statement its own moment: a completion committing between two reads would show a job `done` beside its
 * row as it was before (no transcript source, no output folder). docs/jobs.md, "Reading a job with its rows".
 */
export function readTogether<T>(em: EntityManager, read: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.transactional((tx) => read(tx), { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
}
