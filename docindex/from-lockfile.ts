import { ConflictError, ValidationError } from '../core/errors.js';
import { Library, LibraryVersion } from './entities/library.js';
import { libraryIdOfPackage } from './ids.js';
import { parseLockfile } from './lockfiles/index.js';
import { addVersion, createLibrary, enqueueIndex, type IndexDeps } from './service.js';

/** What became of one direct dependency: indexed and ready, being indexed (queued), or not in its registry. */
export interface DependencyStatus {
  name: string;
  version: string | null;
  libraryId: string | null;
  status: 'ready' | 'queued' | 'unknown';
  reason?: string;
}

/** Dependencies registered per request at most; the rest are answered `unknown` with the reason. */
const MAX_DEPENDENCIES = 200;
/** Registries asked at once. */
const CONCURRENCY = 4;

const stateStatus = (state: string): DependencyStatus['status'] => (state === 'indexed' ? 'ready' : 'queued');

/**
 * One dependency: its library registered when it is not (the package's latest is indexed with it), and its exact
 * version registered and indexed when it is not the library's own.
 */
async function ensureDependency(deps: IndexDeps, ecosystem: 'npm' | 'pypi' | 'crates', name: string, version: string | null): Promise<DependencyStatus> {
  const em = deps.orm.em.fork();
  const base = { name, version };
  let lib = await em.findOne(Library, { source: ecosystem, sourceUrl: name });
  if (!lib) {
    try {
      const { library } = await createLibrary(deps, { source: ecosystem, sourceUrl: name });
      lib = await em.fork().findOneOrFail(Library, { id: library.id });
    } catch (err) {
      if (err instanceof ConflictError) lib = await em.fork().findOneOrFail(Library, { id: libraryIdOfPackage(ecosystem, name) });
      else if (err instanceof ValidationError) return { ...base, libraryId: null, status: 'unknown', reason: err.message };
      else throw err;
    }
  }
  if (version === null || version === lib.latestVersion) return { ...base, libraryId: lib.id, status: stateStatus(lib.state) };
  const existing = await em.findOne(LibraryVersion, { repositoryId: lib.id, tag: version });
  if (existing) {
    if (existing.state === 'error') await enqueueIndex(deps, lib, existing);
    return { ...base, libraryId: `${lib.id}/${version}`, status: stateStatus(existing.state) };
  }
  try {
    await addVersion(deps, lib.id, { tag: version });
    return { ...base, libraryId: `${lib.id}/${version}`, status: 'queued' };
  } catch (err) {
    if (err instanceof ConflictError) return { ...base, libraryId: `${lib.id}/${version}`, status: 'queued' };
    if (err instanceof ValidationError) return { ...base, libraryId: lib.id, status: 'unknown', reason: err.message };
    throw err;
  }
}

/**
 * POST /api/v1/libs/from-lockfile (and the MCP tool): the exact version of each direct dependency of a project,
 * registered and indexed. Answers which are ready, queued (being indexed) or unknown to their registry.
 */
export async function librariesFromLockfile(
  deps: IndexDeps,
  input: { fileName?: string; content: string; manifest?: string; includeDev?: boolean },
) {
  const parsed = parseLockfile(input);
  const wanted = parsed.dependencies.filter((d) => input.includeDev || !d.dev);
  const out: DependencyStatus[] = [];
  for (let i = 0; i < Math.min(wanted.length, MAX_DEPENDENCIES); i += CONCURRENCY) {
    const batch = wanted.slice(i, Math.min(i + CONCURRENCY, MAX_DEPENDENCIES));
    out.push(...(await Promise.all(batch.map((d) => ensureDependency(deps, parsed.ecosystem, d.name, d.version)))));
  }
  for (const d of wanted.slice(MAX_DEPENDENCIES)) {
    out.push({ name: d.name, version: d.version, libraryId: null, status: 'unknown', reason: `more than ${MAX_DEPENDENCIES} dependencies in one request` });
  }
  const count = (s: DependencyStatus['status']) => out.filter((d) => d.status === s).length;
  return {
    format: parsed.format,
    ecosystem: parsed.ecosystem,
    dependencies: out,
    summary: { ready: count('ready'), queued: count('queued'), unknown: count('unknown') },
    warnings: parsed.warnings,
  };
}
