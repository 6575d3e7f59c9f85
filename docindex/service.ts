import path from 'node:path';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../core/config.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { secretBox } from '../core/secrets.js';
import { Job } from '../db/entities/job.js';
import { gitHostTokenContext, Library, type LibrarySource, type LibraryState, LibraryVersion } from './entities/library.js';
import type { Orm } from '../db/orm.js';
import { TEXT_ARRAY, textArray } from '../db/sql.js';
import { launchJob } from '../jobs/launch.js';
import type { JobStore } from '../jobs/store.js';
import { asValidationError, isAddressRefusal, outboundGuard, refused } from '../outbound/guard.js';
import { type GitError, isRepository, localTags, originUrl, probeRemote, remoteTags } from './git.js';
import { remoteAccess } from './remote-access.js';
import { LocalFolders } from './local-folders.js';
import { isGitRemoteUrl, isValidTag, libraryIdFromFolder, libraryIdFromRemote, versionIdOf } from './ids.js';
import { type IndexJobDetail, serializeIndexJob } from './kind.js';
import { lookupContext } from './sources/index.js';
import { describePackage } from './sources/packages.js';
import { parseRefreshEvery } from './refresh/every.js';
import { parsePolicy } from './refresh/policy.js';
import { describeRefresh, ensureRefreshSchedule, pauseRefresh, refreshNow, removeRefreshSchedule, unpauseRefresh } from './refresh/schedules.js';
import { describePackageSource, describeSiteSource, packageDescription, type SourceDescription } from './sources/register.js';
import { isPackageSource, type PackageInfo } from './sources/types.js';

export interface IndexDeps {
  config: Config;
  orm: Orm;
  jobs: JobStore;
  temporal: Client;
  log: Logger;
}

const em = (deps: IndexDeps): EntityManager => deps.orm.em.fork();

export function serializeLibrary(lib: Library) {
  return {
    id: lib.id,
    title: lib.title,
    description: lib.description ?? null,
    source: lib.source,
    sourceUrl: lib.sourceUrl,
    branch: lib.branch ?? null,
    state: lib.state,
    totalSnippets: lib.totalSnippets,
    trustScore: lib.trustScore,
    lastIndexedAt: lib.lastIndexedAt?.toISOString() ?? null,
    repositoryUrl: lib.repositoryUrl ?? null,
    latestVersion: lib.latestVersion ?? null,
    refreshEvery: lib.refreshEvery ?? null,
    versionPolicy: lib.versionPolicy ?? null,
    onDemand: lib.onDemand,
    hasGitHostToken: lib.gitHostToken != null,
    createdAt: lib.createdAt.toISOString(),
    updatedAt: lib.updatedAt.toISOString(),
  };
}

export function serializeVersion(v: LibraryVersion) {
  return {
    id: v.id,
    repositoryId: v.repositoryId,
    tag: v.tag,
    title: v.title ?? undefined,
    commitHash: v.commitHash ?? null,
    state: v.state,
    totalSnippets: v.totalSnippets,
    indexedAt: v.indexedAt?.toISOString() ?? null,
    createdAt: v.createdAt.toISOString(),
  };
}

/** A token as stored: sealed for its library (core/secrets.ts). */
const sealToken = (deps: IndexDeps, libraryId: string, token: string | null | undefined) =>
  token ? secretBox(deps.config, deps.log).seal(token, gitHostTokenContext(libraryId)) : null;

export async function findLibrary(e: EntityManager, id: string): Promise<Library> {
  const lib = await e.findOne(Library, { id });
  if (!lib) throw new NotFoundError(`Library ${id} not found`, 'LIBRARY_NOT_FOUND');
  return lib;
}

export async function findVersion(e: EntityManager, libraryId: string, tag: string): Promise<LibraryVersion> {
  const v = await e.findOne(LibraryVersion, { repositoryId: libraryId, tag });
  if (!v) throw new NotFoundError(`Version ${tag} of ${libraryId} not found`, 'VERSION_NOT_FOUND');
  return v;
}

/** List items add the tags of registered versions, the stored embeddings and the indexed versions. */
export async function listLibraries(
  deps: IndexDeps,
  q: { state?: LibraryState; limit: number; offset: number },
) {
  const e = em(deps);
  const where = q.state ? { state: q.state } : {};
  const [libs, total] = await e.findAndCount(Library, where, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset });
  const ids = libs.map((l) => l.id);
  const versions = ids.length ? await e.find(LibraryVersion, { repositoryId: { $in: ids } }, { orderBy: { createdAt: 'asc' } }) : [];
  const counts: { repository_id: string; n: string }[] = ids.length
    ? await e.execute(`select repository_id, count(*) as n from snippet_embedding where repository_id = any(${TEXT_ARRAY}) group by repository_id`, [textArray(ids)])
    : [];
  const embeddings = new Map(counts.map((c) => [c.repository_id, Number(c.n)]));
  return {
    libraries: libs.map((lib) => {
      const mine = versions.filter((v) => v.repositoryId === lib.id);
      return {
        ...serializeLibrary(lib),
        versions: mine.map((v) => v.tag),
        embeddingCount: embeddings.get(lib.id) ?? 0,
        indexedVersions: [...(lib.lastIndexedAt ? ['main'] : []), ...mine.filter((v) => v.state === 'indexed').map((v) => v.tag)],
      };
    }),
    total,
    limit: q.limit,
    offset: q.offset,
  };
}

export async function getLibrary(deps: IndexDeps, id: string) {
  const e = em(deps);
  const lib = await findLibrary(e, id);
  const versions = await e.find(LibraryVersion, { repositoryId: id }, { orderBy: { createdAt: 'asc' } });
  return { ...serializeLibrary(lib), versions: versions.map((v) => v.tag) };
}

async function checkLocalFolder(config: Config, sourceUrl: string): Promise<string> {
  if (!path.isAbsolute(sourceUrl)) {
    throw new ValidationError('sourceUrl of a local library must be an absolute folder path', 'INVALID_SOURCE_URL');
  }
  try {
    return await new LocalFolders(config).resolve(sourceUrl);
  } catch (err) {
    if (err instanceof NotFoundError) throw new ValidationError(`${path.resolve(sourceUrl)} is not a folder this server can read`, 'INVALID_SOURCE_URL');
    throw err;
  }
}

export interface NewLibrary {
  source: LibrarySource;
  /** A repository's URL or folder, a package's name, or a site's start URL. */
  sourceUrl: string;
  title?: string;
  description?: string;
  branch?: string;
  gitHostToken?: string;
  autoIndex?: boolean;
  /** Registered by a search that found nothing (docindex/on-demand.ts). */
  onDemand?: boolean;
  /** The package as its registry was just read (on demand): registering does not ask the registry again. */
  package?: PackageInfo;
  /** Its refresh interval (`6h`, `1d`, `off`) and version policy; null or absent: the defaults. */
  refreshEvery?: string | null;
  versionPolicy?: string | null;
}

/** A refresh interval and policy as given, checked (400 INVALID_REFRESH_EVERY, INVALID_VERSION_POLICY), trimmed. */
function refreshSettings(input: { refreshEvery?: string | null; versionPolicy?: string | null }) {
  const out: { refreshEvery?: string | null; versionPolicy?: string | null } = {};
  if (input.refreshEvery !== undefined) {
    out.refreshEvery = input.refreshEvery?.trim() || null;
    if (out.refreshEvery) parseRefreshEvery(out.refreshEvery);
  }
  if (input.versionPolicy !== undefined) {
    out.versionPolicy = input.versionPolicy?.trim() || null;
    if (out.versionPolicy) parsePolicy(out.versionPolicy);
  }
  return out;
}

/** A repository's id and checked URL or folder (the remote answers; the folder may be read). */
async function describeRepository(deps: IndexDeps, input: NewLibrary): Promise<SourceDescription> {
  let sourceUrl = input.sourceUrl.trim();
  let id: string | undefined;
  if (input.source === 'git-host') {
    if (!isGitRemoteUrl(sourceUrl)) {
      throw new ValidationError(
        'sourceUrl must be a git remote URL (https://, ssh://, git:// or user@host:owner/repo), without a password (use gitHostToken)',
        'INVALID_SOURCE_URL',
        [{ pointer: '/body/sourceUrl', message: 'not a git remote URL' }],
      );
    }
    id = libraryIdFromRemote(sourceUrl);
    if (!id) throw new ValidationError('sourceUrl must name an owner and a repository', 'INVALID_SOURCE_URL');
    try {
      await probeRemote(sourceUrl, { guard: outboundGuard(deps.config), token: input.gitHostToken });
    } catch (err) {
      if (isAddressRefusal(err)) throw asValidationError(refused('The repository', err), '/body/sourceUrl');
      throw new ValidationError(`The repository cannot be read: ${(err as Error).message}`, 'REPOSITORY_UNREACHABLE');
    }
  } else {
    sourceUrl = await checkLocalFolder(deps.config, sourceUrl);
    id = libraryIdFromFolder(sourceUrl, (await isRepository(sourceUrl)) ? await originUrl(sourceUrl) : undefined);
  }
  return { id, sourceUrl, title: id.split('/').pop()!, description: null, repositoryUrl: null };
}

/** Where a new library's files will come from, checked: the one switch on the source when registering. */
function describeSource(deps: IndexDeps, input: NewLibrary): Promise<SourceDescription> {
  if (input.gitHostToken && input.source !== 'git-host') throw new ValidationError('Only git-host libraries take a gitHostToken', 'VALIDATION_ERROR');
  if (isPackageSource(input.source)) {
    return input.package ? Promise.resolve(packageDescription(input.package)) : describePackageSource(deps.config, deps.log, input.source, input.sourceUrl);
  }
  if (input.source === 'website') return describeSiteSource(deps.config, deps.log, input.sourceUrl);
  return describeRepository(deps, input);
}

export async function createLibrary(deps: IndexDeps, input: NewLibrary) {
  const refresh = refreshSettings(input);
  const { id, sourceUrl, ...described } = await describeSource(deps, input);

  const e = em(deps);
  if (await e.findOne(Library, { id })) throw new ConflictError(`Library ${id} already exists`, 'LIBRARY_EXISTS');
  const now = new Date();
  const lib = e.create(Library, {
    id,
    title: input.title?.trim() || described.title,
    description: input.description?.trim() || described.description,
    source: input.source,
    sourceUrl,
    repositoryUrl: described.repositoryUrl,
    onDemand: input.onDemand ?? false,
    refreshEvery: refresh.refreshEvery ?? null,
    versionPolicy: refresh.versionPolicy ?? null,
    branch: input.branch?.trim() || null,
    gitHostToken: sealToken(deps, id, input.gitHostToken),
    state: 'pending',
    totalSnippets: 0,
    trustScore: 0,
    createdAt: now,
    updatedAt: now,
  });
  try {
    await e.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new ConflictError(`Library ${id} already exists`, 'LIBRARY_EXISTS');
    throw err;
  }
  // Every library is kept fresh by its own schedule (docindex/refresh/schedules.ts).
  await ensureRefreshSchedule(deps, lib);
  const job = input.autoIndex === false ? undefined : (await enqueueIndex(deps, lib, null)).job;
  return { library: serializeLibrary(lib), ...(job && { job }) };
}

export async function updateLibrary(
  deps: IndexDeps,
  id: string,
  patch: {
    title?: string;
    description?: string | null;
    branch?: string | null;
    gitHostToken?: string | null;
    refreshEvery?: string | null;
    versionPolicy?: string | null;
    refreshPaused?: boolean;
  },
) {
  const e = em(deps);
  const lib = await findLibrary(e, id);
  const refresh = refreshSettings(patch);
  if (patch.gitHostToken !== undefined && lib.source !== 'git-host') {
    throw new ValidationError('Only git-host libraries take a gitHostToken', 'VALIDATION_ERROR');
  }
  if (patch.title !== undefined) lib.title = patch.title.trim() || lib.title;
  if (patch.description !== undefined) lib.description = patch.description?.trim() || null;
  if (patch.branch !== undefined) lib.branch = patch.branch?.trim() || null;
  if (patch.gitHostToken !== undefined) lib.gitHostToken = sealToken(deps, lib.id, patch.gitHostToken);
  if (refresh.refreshEvery !== undefined) lib.refreshEvery = refresh.refreshEvery;
  if (refresh.versionPolicy !== undefined) lib.versionPolicy = refresh.versionPolicy;
  lib.updatedAt = new Date();
  await e.flush();
  if (refresh.refreshEvery !== undefined) await ensureRefreshSchedule(deps, lib);
  if (patch.refreshPaused === true) await pauseRefresh(deps, lib.id);
  if (patch.refreshPaused === false) await unpauseRefresh(deps, lib.id);
  return serializeLibrary(lib);
}

/** Unfinished indexing jobs of a library, or of one of its versions. */
async function activeJobs(e: EntityManager, repositoryId: string, versionId?: string): Promise<Job[]> {
  const rows: { id: string }[] = await e.execute(
    `select id from job where kind = 'index' and completed_at is null and detail->>'repositoryId' = ?` +
      (versionId ? ` and detail->>'versionId' = ?` : ''),
    versionId ? [repositoryId, versionId] : [repositoryId],
  );
  return rows.length ? e.find(Job, { id: { $in: rows.map((r) => r.id) } }) : [];
}

async function cancelWorkflows(deps: IndexDeps, jobs: Job[]): Promise<void> {
  await Promise.all(
    jobs.map((j) =>
      deps.temporal.workflow
        .getHandle(j.workflowId)
        .cancel()
        .catch(() => undefined), // already gone: nothing to cancel
    ),
  );
}

/**
 * Cancels the library's running jobs, then removes it with everything under it (versions, documents, snippets,
 * embeddings, rules: foreign keys cascade) and its jobs with their events, in one transaction.
 */
export async function deleteLibrary(deps: IndexDeps, id: string) {
  const e = em(deps);
  await findLibrary(e, id);
  const active = await activeJobs(e, id);
  await cancelWorkflows(deps, active);
  // A refresh that still runs finds the library gone and removes its own schedule too.
  await removeRefreshSchedule(deps, id);
  return e.transactional(async (tx) => {
    const versions = await tx.count(LibraryVersion, { repositoryId: id });
    // The library first: it waits for a swap in progress (docs/documentation-index.md, "Writing while crawling") while
    // holding nothing that swap's crawl still writes, as its job and events.
    await tx.nativeDelete(Library, { id });
    const jobs: { id: string }[] = await tx.execute(`select id from job where kind = 'index' and detail->>'repositoryId' = ?`, [id]);
    await deleteJobs(tx, jobs.map((j) => j.id), [`repo:${id}`]);
    return { id, deleted: true, versionsDeleted: versions, jobsCancelled: active.length };
  });
}

/** Removes jobs with their own streams, the given streams, and their events in the all-libraries stream. */
async function deleteJobs(tx: EntityManager, ids: string[], extraStreams: string[] = []): Promise<void> {
  const streams = [...ids.map((j) => `job:${j}`), ...extraStreams];
  if (streams.length) {
    await tx.execute(`delete from job_event where stream = any(${TEXT_ARRAY})`, [textArray(streams)]);
    await tx.execute(`delete from event_stream where name = any(${TEXT_ARRAY})`, [textArray(streams)]);
  }
  if (ids.length) {
    await tx.execute(`delete from job_event where stream = 'kind:index' and data->>'jobId' = any(${TEXT_ARRAY})`, [textArray(ids)]);
    await tx.execute(`delete from job where id = any(${TEXT_ARRAY})`, [textArray(ids)]);
  }
}

/** Starts (or joins) the indexing job of a library's default branch or of one version. */
export async function enqueueIndex(deps: IndexDeps, lib: Library, version: LibraryVersion | null) {
  const detail: IndexJobDetail = { repositoryId: lib.id, versionId: version?.id ?? null, totalFiles: 0, processedFiles: 0 };
  const key = `index:${lib.id}${version ? `@${version.tag}` : ''}`;
  const { job, created } = await launchJob(
    { em: em(deps), jobs: deps.jobs, temporal: deps.temporal, config: deps.config },
    {
      kind: 'index',
      status: 'queued',
      stage: 'queued',
      workflowId: key,
      activeKey: key,
      topics: [`repo:${lib.id}`],
      detail,
      workflowType: 'indexLibraryWorkflow',
      queue: 'indexing',
      args: (j) => [{ jobId: j.id, repositoryId: lib.id, versionId: version?.id ?? null, heartbeatTimeoutMs: deps.config.indexingHeartbeatTimeoutMs }],
      subject: version ? `${lib.id}@${version.tag}` : lib.id,
    },
  );
  return { job: serializeIndexJob(job), created };
}

/** Re-indexes the default branch and every registered version (the latter come back as versionJobs). */
export async function indexLibrary(deps: IndexDeps, id: string) {
  const e = em(deps);
  const lib = await findLibrary(e, id);
  const main = await enqueueIndex(deps, lib, null);
  const versions = await e.find(LibraryVersion, { repositoryId: id }, { orderBy: { createdAt: 'asc' } });
  const versionJobs = [];
  let created = main.created;
  for (const v of versions) {
    const r = await enqueueIndex(deps, lib, v);
    created ||= r.created;
    versionJobs.push(r.job);
  }
  return { created, body: { job: main.job, versionJobs } };
}

export async function listVersions(deps: IndexDeps, id: string) {
  const e = em(deps);
  await findLibrary(e, id);
  const versions = await e.find(LibraryVersion, { repositoryId: id }, { orderBy: { createdAt: 'asc' } });
  return { versions: versions.map(serializeVersion) };
}

export async function addVersion(deps: IndexDeps, id: string, input: { tag: string; title?: string; autoIndex?: boolean }) {
  const e = em(deps);
  const lib = await findLibrary(e, id);
  const tag = input.tag.trim();
  if (!isValidTag(tag)) throw new ValidationError(`"${input.tag}" is not a valid tag name`, 'INVALID_TAG');
  if (await e.findOne(LibraryVersion, { repositoryId: id, tag })) {
    throw new ConflictError(`Version ${tag} of ${id} already exists`, 'VERSION_EXISTS');
  }
  let commitHash: string | null = null;
  if (lib.source === 'website') {
    throw new ValidationError('A website has no versions: its pages are read as they are now', 'VERSIONS_NOT_SUPPORTED');
  } else if (isPackageSource(lib.source)) {
    await checkPackageVersion(deps, lib, tag);
  } else if (lib.source === 'git-host') {
    // A git-host tag is checked against the host's tag list before indexing.
    let tags: Map<string, string>;
    try {
      tags = await remoteTags(lib.sourceUrl, remoteAccess(deps.config, lib));
    } catch (err) {
      if (isAddressRefusal(err)) throw asValidationError(refused('The repository', err));
      throw new ValidationError(`The repository's tags cannot be read: ${(err as GitError).message}`, 'REPOSITORY_UNREACHABLE');
    }
    if (!tags.has(tag)) throw new ValidationError(`Tag ${tag} does not exist in ${lib.sourceUrl}`, 'TAG_NOT_FOUND');
    commitHash = tags.get(tag)!;
  } else {
    const local = (await localTags(await checkLocalFolder(deps.config, lib.sourceUrl))).find((t) => t.tag === tag);
    if (!local) throw new ValidationError(`Tag ${tag} does not exist in ${lib.sourceUrl}`, 'TAG_NOT_FOUND');
    commitHash = local.commit;
  }
  const version = e.create(LibraryVersion, {
    id: versionIdOf(id, tag),
    repositoryId: id,
    tag,
    title: input.title?.trim() || null,
    commitHash,
    state: 'pending',
    totalSnippets: 0,
    createdAt: new Date(),
  });
  await e.flush();
  const job = input.autoIndex === false ? null : (await enqueueIndex(deps, lib, version)).job;
  return { version: serializeVersion(version), job };
}

/** A package's version exists in its registry (400 VERSION_NOT_FOUND when not; a yanked one may still be indexed). */
async function checkPackageVersion(deps: IndexDeps, lib: Library, tag: string): Promise<void> {
  const ctx = lookupContext(deps.config, deps.log, AbortSignal.timeout(15_000));
  const info = await describePackage(lib, ctx).catch((err: unknown) => {
    if (isAddressRefusal(err)) throw asValidationError(refused(`The ${lib.source} registry`, err));
    throw new ValidationError(`The ${lib.source} registry cannot be read: ${(err as Error).message}`, 'REGISTRY_UNREACHABLE');
  });
  if (!info.versions.some((v) => v.version === tag)) throw new ValidationError(`The ${lib.source} registry has no version ${tag} of ${info.name}`, 'VERSION_NOT_FOUND');
}

/** An interval as people write it: `1d`, `6h`, `90m`. */
const durationText = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${Math.round(ms / 60_000)}m`;

/** The library's refresh schedule as the API shows it (404 REFRESH_OFF when its interval is `off`). */
export async function libraryRefresh(deps: IndexDeps, id: string) {
  const lib = await findLibrary(em(deps), id);
  const state = await describeRefresh(deps, id);
  if (!state) throw new NotFoundError(`${id} has no refresh schedule (its interval is off)`, 'REFRESH_OFF');
  return {
    ...state,
    every: lib.refreshEvery ?? durationText(state.every),
    everyMs: state.every,
    policy: lib.versionPolicy ?? deps.config.indexVersionPolicy,
    nextRunAt: state.nextRunAt?.toISOString() ?? null,
    lastRunAt: state.lastRunAt?.toISOString() ?? null,
  };
}

export async function refreshLibraryNow(deps: IndexDeps, id: string) {
  await findLibrary(em(deps), id);
  if (!(await refreshNow(deps, id))) throw new NotFoundError(`${id} has no refresh schedule (its interval is off)`, 'REFRESH_OFF');
  return { triggered: true };
}

export async function deleteVersion(deps: IndexDeps, id: string, tag: string) {
  const e = em(deps);
  const version = await findVersion(e, id, tag);
  const active = await activeJobs(e, id, version.id);
  await cancelWorkflows(deps, active);
  return e.transactional(async (tx) => {
    // The version first, as `deleteLibrary` does.
    await tx.nativeDelete(LibraryVersion, { id: version.id });
    const jobs: { id: string }[] = await tx.execute(
      `select id from job where kind = 'index' and detail->>'repositoryId' = ? and detail->>'versionId' = ?`,
      [id, version.id],
    );
    await deleteJobs(tx, jobs.map((j) => j.id));
    return { id: version.id, deleted: true, jobsCancelled: active.length };
  });
}

export async function indexVersion(deps: IndexDeps, id: string, tag: string) {
  const e = em(deps);
  const lib = await findLibrary(e, id);
  return enqueueIndex(deps, lib, await findVersion(e, id, tag));
}

/** Tags of a local repository; empty for git-host libraries and when git fails. */
export async function discoverTags(deps: IndexDeps, id: string) {
  const lib = await findLibrary(em(deps), id);
  if (lib.source !== 'local') return { tags: [] as string[] };
  return { tags: (await localTags(await checkLocalFolder(deps.config, lib.sourceUrl))).map((t) => t.tag).sort() };
}

export async function listJobs(deps: IndexDeps, q: { repositoryId?: string; status?: string; limit: number }) {
  const where: string[] = [`kind = 'index'`];
  const params: unknown[] = [];
  if (q.repositoryId) {
    where.push(`detail->>'repositoryId' = ?`);
    params.push(q.repositoryId);
  }
  if (q.status) {
    where.push('status = ?');
    params.push(q.status);
  }
  const e = em(deps);
  const [{ n }] = (await e.execute(`select count(*) as n from job where ${where.join(' and ')}`, params)) as [{ n: string }];
  const ids: { id: string }[] = await e.execute(
    `select id from job where ${where.join(' and ')} order by created_at desc, id limit ?`,
    [...params, q.limit],
  );
  const jobs = ids.length ? await e.find(Job, { id: { $in: ids.map((r) => r.id) } }) : [];
  const byId = new Map(jobs.map((j) => [j.id, j]));
  return { jobs: ids.map((r) => serializeIndexJob(byId.get(r.id)!)), total: Number(n) };
}

export async function findIndexJob(deps: IndexDeps, id: string): Promise<Job> {
  const job = await em(deps).findOne(Job, { id, kind: 'index' });
  if (!job) throw new NotFoundError(`Job ${id} not found`, 'JOB_NOT_FOUND');
  return job;
}
