import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job } from '../db/entities/job.js';
import { RecipeItem } from './entities.js';
import type { JobKind } from '../jobs/kinds.js';
import { type PhaseEntry, type QueueStatus, RECIPE_KIND, RECIPE_STATUSES, type RecipeResults } from './contract.js';
import { failRunning } from './phases.js';

/** Only what is there: `results` and `error` are optional (docs/recipes.md). */
function results(item: RecipeItem | null): RecipeResults | undefined {
  const r = item?.results;
  return r && Object.keys(r).length ? r : undefined;
}

/** A queue item as the API shows it (docs/recipes.md: its fields, plus `runs` and the run's start and end). */
export function itemView(job: Job, item: RecipeItem) {
  const r = results(item);
  return {
    id: job.id,
    url: item.url,
    status: job.status as QueueStatus,
    phases: item.phases,
    ...(r && { results: r }),
    ...(item.options && { options: item.options }),
    ...(job.error && { error: job.error }),
    runs: item.runs,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    ...(job.startedAt && { startedAt: job.startedAt.toISOString() }),
    ...(job.completedAt && { completedAt: job.completedAt.toISOString() }),
  };
}
export type ItemView = ReturnType<typeof itemView>;

export const QUEUE_UPDATE = 'queue-update';

/** An item's status update: the `queue-update` event's data (docs/recipes.md, "Events"). */
export function queueUpdate(job: Job, item: RecipeItem | null) {
  const r = results(item);
  return {
    itemId: job.id,
    status: job.status as QueueStatus,
    timestamp: job.updatedAt.toISOString(),
    progress: item?.phases ?? ([] as PhaseEntry[]),
    ...(r && { results: r }),
    ...(job.error && { error: job.error }),
  };
}

/**
 * Recipe items in the job machinery. Every change of an item (its status, and each phase starting or ending,
 * written with the job in one transaction) publishes one `queue-update` event with the whole status update, so a
 * stream resumed with Last-Event-ID replays exactly what the client missed. Whoever ends a run (its workflow, an
 * operator cancelling or terminating it, the reconciler), the phase that was running is marked `error` with it.
 */
export const recipeKind: JobKind = {
  name: RECIPE_KIND,
  statuses: RECIPE_STATUSES,
  stateEvent: async (job: Job, tx: EntityManager) => {
    const item = await tx.findOne(RecipeItem, { jobId: job.id }, { refresh: true });
    return { event: QUEUE_UPDATE, data: queueUpdate(job, item) };
  },
  onChange: async (tx: EntityManager, job: Job, before: Pick<Job, 'status' | 'completedAt'>) => {
    if (!job.completedAt || before.completedAt || job.status === RECIPE_STATUSES.done) return;
    const item = await tx.findOne(RecipeItem, { jobId: job.id });
    if (!item?.phases.some((p) => p.status === 'in_progress')) return;
    item.phases = failRunning(item.phases, new Date().toISOString());
    await tx.flush();
  },
};
