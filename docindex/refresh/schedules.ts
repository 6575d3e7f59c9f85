import type { Client } from '@temporalio/client';
import { type Config, taskQueue } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import type { Orm } from '../../db/orm.js';
import { describeSchedule, ensureSchedule, pauseSchedule, removeSchedule, type ScheduleState, triggerSchedule, unpauseSchedule } from '../../jobs/schedules.js';
import { Library } from '../entities/library.js';
import { parseRefreshEvery, type RefreshEvery } from './every.js';

/**
 * Every library's refresh schedule (a Temporal Schedule, visible and pausable in the Temporal UI): at its interval
 * it runs refreshLibraryWorkflow (docindex/refresh/workflow.ts) on the indexing queue. The interval is the library's
 * own (`refreshEvery`) or INDEX_REFRESH_EVERY; `off` means no schedule.
 */
export interface RefreshDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  log: Logger;
}

/** `refresh:<libraryId>`, after the deployment's prefix (as workflow ids are, jobs/launch.ts). */
export const refreshScheduleId = (config: Pick<Config, 'taskQueuePrefix'>, libraryId: string) => `${config.taskQueuePrefix}refresh:${libraryId}`;

/** The library's interval: its own, else the default. A ValidationError when its own cannot be read. */
export function refreshEveryOf(config: Pick<Config, 'indexRefreshEvery'>, lib: Pick<Library, 'refreshEvery'>): RefreshEvery {
  return lib.refreshEvery ? parseRefreshEvery(lib.refreshEvery) : config.indexRefreshEvery;
}

/**
 * Creates or updates the library's schedule to its interval (a pause made in the Temporal UI stays), or removes it
 * when the interval is `off`. Call after creating a library or changing its interval.
 */
export async function ensureRefreshSchedule(deps: RefreshDeps, lib: Pick<Library, 'id' | 'refreshEvery'>): Promise<'created' | 'updated' | 'unchanged' | 'removed'> {
  const every = refreshEveryOf(deps.config, lib);
  const scheduleId = refreshScheduleId(deps.config, lib.id);
  if (every === 'off') {
    await removeSchedule(deps.temporal, scheduleId);
    return 'removed';
  }
  return ensureSchedule(deps.temporal, {
    scheduleId,
    every,
    workflowType: 'refreshLibraryWorkflow',
    taskQueue: taskQueue(deps.config, 'indexing'),
    args: [{ libraryId: lib.id }],
    memo: { libraryId: lib.id },
  });
}

/** Removes the library's schedule (deleting a library); nothing when it has none. */
export async function removeRefreshSchedule(deps: RefreshDeps, libraryId: string): Promise<boolean> {
  return removeSchedule(deps.temporal, refreshScheduleId(deps.config, libraryId));
}

/** The schedule as the Temporal UI shows it, or null when the library has none (`off`). */
export async function describeRefresh(deps: RefreshDeps, libraryId: string): Promise<ScheduleState | null> {
  return describeSchedule(deps.temporal, refreshScheduleId(deps.config, libraryId));
}

/** Pauses the library's refreshes, with a note saying why; false when it has no schedule. */
export async function pauseRefresh(deps: RefreshDeps, libraryId: string, note = 'Paused in Gristmill'): Promise<boolean> {
  return pauseSchedule(deps.temporal, refreshScheduleId(deps.config, libraryId), note);
}

export async function unpauseRefresh(deps: RefreshDeps, libraryId: string, note = 'Unpaused in Gristmill'): Promise<boolean> {
  return unpauseSchedule(deps.temporal, refreshScheduleId(deps.config, libraryId), note);
}

/** Runs the library's refresh now, as its schedule would (nothing when one is running); false when it has none. */
export async function refreshNow(deps: RefreshDeps, libraryId: string): Promise<boolean> {
  return triggerSchedule(deps.temporal, refreshScheduleId(deps.config, libraryId));
}

const PAGE = 200;
const AT_ONCE = 4;

/**
 * Gives every library the schedule its interval asks for (and none to those `off`), at start: libraries made before
 * schedules existed, a changed INDEX_REFRESH_EVERY. Unchanged schedules are only read. One library's failure is
 * logged and does not stop the others.
 */
export async function reconcileRefreshSchedules(deps: RefreshDeps): Promise<{ ensured: number; removed: number; failed: number }> {
  const counts = { ensured: 0, removed: 0, failed: 0 };
  for (let offset = 0; ; offset += PAGE) {
    const libs = await deps.orm.em.fork().find(Library, {}, { fields: ['id', 'refreshEvery'], orderBy: { id: 'asc' }, limit: PAGE, offset });
    for (let i = 0; i < libs.length; i += AT_ONCE) {
      await Promise.all(
        libs.slice(i, i + AT_ONCE).map(async (lib) => {
          try {
            counts[(await ensureRefreshSchedule(deps, lib)) === 'removed' ? 'removed' : 'ensured']++;
          } catch (err) {
            counts.failed++;
            deps.log.warn('could not set up the refresh schedule of a library', { library: lib.id, error: (err as Error).message });
          }
        }),
      );
    }
    if (libs.length < PAGE) return counts;
  }
}
