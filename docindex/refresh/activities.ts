import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ActivityDeps } from '../../activities/deps.js';
import { alive } from '../../activities/heartbeat.js';
import { PermanentError } from '../../core/errors.js';
import { removeSchedule } from '../../jobs/schedules.js';
import { Library, LibraryVersion } from '../entities/library.js';
import { versionIdOf } from '../ids.js';
import { enqueueIndex } from '../service.js';
import { isPackageSource } from '../sources/types.js';
import { sourceHead } from './head.js';
import { parsePolicy, pickVersions } from './policy.js';
import { refreshScheduleId } from './schedules.js';

export interface RefreshInput {
  libraryId: string;
}

/** What a refresh will do, decided once (it is in the workflow's history, so a retried apply does the same). */
export interface RefreshPlan {
  libraryId: string;
  /** Why nothing is done: the library was deleted, or it is being indexed (the next refresh looks again). */
  skipped?: 'library deleted' | 'indexing';
  /** The default scope moved (or has no stamp): it is indexed again, incrementally. */
  reindex: boolean;
  /** What the source's default scope is at now (null: no stamp). */
  revision: string | null;
  /** Versions the policy wants that are not registered yet, newest first. */
  newVersions: { tag: string; commit: string | null }[];
}

export interface RefreshOutcome {
  reindexJobId: string | null;
  versions: { tag: string; jobId: string | null }[];
}

/** A refresh registers at most this many versions a run (newest first); the next runs take the rest. */
export const MAX_NEW_VERSIONS = 10;

/** What the default scope was last indexed at: a package's version, otherwise the commit (or a site's stamp). */
const indexedRevision = (lib: Library): string | null =>
  isPackageSource(lib.source) ? (lib.latestVersion ?? null) : (lib.lastCommit ?? null);

async function indexing(em: EntityManager, libraryId: string): Promise<boolean> {
  const rows: unknown[] = await em.execute(`select 1 from job where kind = 'index' and completed_at is null and detail->>'repositoryId' = ? limit 1`, [
    libraryId,
  ]);
  return rows.length > 0;
}

/** Compares the source as it is now with what was indexed, and picks the new versions by the library's policy. */
async function planRefresh(deps: ActivityDeps, input: RefreshInput): Promise<RefreshPlan> {
  const em = deps.orm.em.fork();
  const nothing = { libraryId: input.libraryId, reindex: false, revision: null, newVersions: [] };
  const lib = await em.findOne(Library, { id: input.libraryId });
  if (!lib) {
    // Its schedule outlived it (deleted while the library was being removed): it removes itself.
    await removeSchedule(deps.temporal, refreshScheduleId(deps.config, input.libraryId));
    return { ...nothing, skipped: 'library deleted' };
  }
  if (await indexing(em, lib.id)) return { ...nothing, skipped: 'indexing' };
  let policy;
  try {
    policy = parsePolicy(lib.versionPolicy ?? deps.config.indexVersionPolicy);
  } catch (err) {
    throw new PermanentError(`Library ${lib.id}: ${(err as Error).message}`, 'INVALID_VERSION_POLICY');
  }
  const head = await sourceHead(deps, lib, Context.current().cancellationSignal);
  const registered = new Set((await em.find(LibraryVersion, { repositoryId: lib.id }, { fields: ['tag'] })).map((v) => v.tag));
  const commits = new Map(head.versions.map((v) => [v.version, v.commit]));
  const wanted = pickVersions(policy, head.versions).filter((tag) => !registered.has(tag));
  return {
    libraryId: lib.id,
    reindex: head.revision === null || head.revision !== indexedRevision(lib),
    revision: head.revision,
    newVersions: wanted.slice(0, MAX_NEW_VERSIONS).map((tag) => ({ tag, commit: commits.get(tag) ?? null })),
  };
}

/**
 * Registers the plan's versions and starts their indexing, and the default scope's when it moved. Safe to run again
 * (a retry, or beside a late attempt): a version is inserted at most once (its unique key; a conflict does nothing),
 * only versions never indexed get a job, a scope already indexed at the plan's revision is left alone, and
 * enqueueIndex joins an indexing job that is already running.
 */
async function applyRefresh(deps: ActivityDeps, plan: RefreshPlan): Promise<RefreshOutcome> {
  const em = deps.orm.em.fork();
  const lib = await em.findOne(Library, { id: plan.libraryId });
  if (!lib || plan.skipped) return { reindexJobId: null, versions: [] };
  if (plan.newVersions.length) {
    const now = new Date();
    await em
      .createQueryBuilder(LibraryVersion)
      .insert(
        plan.newVersions.map((v) => ({
          id: versionIdOf(lib.id, v.tag),
          repositoryId: lib.id,
          tag: v.tag,
          commitHash: v.commit,
          state: 'pending' as const,
          totalSnippets: 0,
          createdAt: now,
        })),
      )
      .onConflict()
      .ignore()
      .execute();
  }
  const pending = await em.find(LibraryVersion, { repositoryId: lib.id, tag: { $in: plan.newVersions.map((v) => v.tag) }, state: 'pending' });
  const versions = [];
  for (const version of pending) versions.push({ tag: version.tag, jobId: (await enqueueIndex(deps, lib, version)).job.id });
  const moved = plan.reindex && (plan.revision === null || plan.revision !== indexedRevision(lib));
  const reindexJobId = moved ? (await enqueueIndex(deps, lib, null)).job.id : null;
  if (moved || versions.length) deps.log.info('refresh started indexing', { library: lib.id, reindex: moved, versions: versions.map((v) => v.tag).join(',') });
  return { reindexJobId, versions };
}

/** A library's refresh, as activities of the indexing queue (docindex/refresh/workflow.ts runs them). */
export function createRefreshActivities(deps: ActivityDeps) {
  return {
    planRefresh: (input: RefreshInput) => alive(() => planRefresh(deps, input)),
    applyRefresh: (plan: RefreshPlan) => alive(() => applyRefresh(deps, plan)),
  };
}
export type RefreshActivities = ReturnType<typeof createRefreshActivities>;
