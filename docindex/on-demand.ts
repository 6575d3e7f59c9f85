import { ConflictError, ValidationError } from '../core/errors.js';
import { Library } from './entities/library.js';
import { librariesFromLockfile } from './from-lockfile.js';
import { parseLibraryRef } from './ids.js';
import { addVersion, createLibrary, findLibrary, type IndexDeps } from './service.js';
import { lookupContext } from './sources/index.js';
import { lookupPackage } from './sources/registries/index.js';
import { type Ecosystem, isPackageSource } from './sources/types.js';

/**
 * On demand (docs/documentation-index.md, "On demand"): a library search that finds nothing looks the name up in
 * the registries (INDEX_ON_DEMAND_REGISTRIES, in order), registers the first package found with its repository, and
 * starts indexing its latest version. The search then answers with that library, marked as being indexed.
 */

/** How long one on-demand lookup may hold a search: the registries are asked at once, each this long at most. */
const LOOKUP_MS = 8_000;
/** A name no registry had is not looked up again for this long (per process). */
const MISS_TTL_MS = 10 * 60_000;
const misses = new Map<string, number>();

/** Words in a question that say which ecosystem is meant. */
const HINTS: [Ecosystem, RegExp][] = [
  ['pypi', /\b(python|pip|pypi|django|flask|pandas|pydantic|fastapi|asyncio)\b/i],
  ['crates', /\b(rust|cargo|crates?|tokio|serde)\b/i],
  ['npm', /\b(node(\.js)?|npm|javascript|typescript|react|deno|bun|js|ts)\b/i],
];

/**
 * What a name asks for: an explicit `npm:x`, `pypi:x`, `crates:x` or `/npm/x` names one registry; otherwise the
 * configured registries, those the question hints at first.
 */
export function lookupPlan(name: string, query: string, registries: readonly Ecosystem[]): { ecosystems: Ecosystem[]; names: string[] } {
  const raw = name.trim();
  const explicit = /^(npm|pypi|crates):(.+)$/i.exec(raw) ?? /^\/(npm|pypi|crates)\/(.+)$/.exec(raw);
  if (explicit) {
    const eco = explicit[1]!.toLowerCase() as Ecosystem;
    const ref = raw.startsWith('/') ? parseLibraryRef(raw) : undefined;
    const pkg = ref ? ref.libraryId.slice(eco.length + 2) : explicit[2]!.trim();
    return { ecosystems: registries.includes(eco) ? [eco] : [], names: [pkg] };
  }
  const hinted = HINTS.filter(([eco, re]) => registries.includes(eco) && re.test(query)).map(([eco]) => eco);
  const ecosystems = [...new Set([...hinted, ...registries])];
  // "Next.js" is published as `next`, "Vue 3" as `vue`: the name as given first, then without such suffixes.
  const lower = raw.toLowerCase();
  const names = [lower, lower.replace(/[.\s-]?js$/, ''), lower.replace(/\s+v?\d+(\.\d+)*$/, ''), lower.replace(/\s+/g, '-')];
  return { ecosystems, names: [...new Set(names)].filter((n) => n && n.length <= 214 && !/[\s\0]/.test(n)) };
}

/** The package found first by the plan's order: ecosystem, then name spelling. */
async function findPackage(deps: IndexDeps, plan: { ecosystems: Ecosystem[]; names: string[] }) {
  const signal = AbortSignal.timeout(LOOKUP_MS);
  const ctx = lookupContext(deps.config, deps.log, signal);
  const attempts = plan.ecosystems.flatMap((ecosystem) => plan.names.map((name) => ({ ecosystem, name })));
  const found = await Promise.all(
    attempts.map(async (a) => {
      try {
        return await lookupPackage(a.ecosystem, a.name, ctx);
      } catch (err) {
        // A registry that is down or refuses a name is one miss among the others: logged, not an error to the search.
        if (!(err instanceof ValidationError)) deps.log.warn('on-demand lookup failed', { registry: a.ecosystem, name: a.name, error: (err as Error).message });
        return null;
      }
    }),
  );
  const i = found.findIndex((p) => p !== null);
  return i < 0 ? undefined : { ecosystem: attempts[i]!.ecosystem, info: found[i]! };
}

/**
 * Registers and starts indexing the package a search for `name` means, when on-demand registration is on, under its
 * cap, and a registry has it; returns the library (new, or one a concurrent search registered), or undefined.
 */
export async function registerOnDemand(deps: IndexDeps, name: string, query: string): Promise<Library | undefined> {
  const cfg = deps.config.sources;
  if (!cfg.onDemand || !name.trim() || name.length > 300) return undefined;
  const key = `${name.trim().toLowerCase()}\0${cfg.onDemandRegistries.join(',')}`;
  if ((misses.get(key) ?? 0) > Date.now()) return undefined;
  const em = deps.orm.em.fork();
  if ((await em.count(Library, { onDemand: true })) >= cfg.onDemandMaxLibraries) {
    deps.log.warn('on-demand registration skipped: INDEX_ON_DEMAND_MAX_LIBRARIES reached', { name });
    return undefined;
  }
  const found = await findPackage(deps, lookupPlan(name, query, cfg.onDemandRegistries));
  if (!found) {
    misses.set(key, Date.now() + MISS_TTL_MS);
    if (misses.size > 10_000) misses.clear();
    return undefined;
  }
  const existing = await em.findOne(Library, { source: found.ecosystem, sourceUrl: found.info.name });
  if (existing) return existing;
  try {
    const { library } = await createLibrary(deps, { source: found.ecosystem, sourceUrl: found.info.name, onDemand: true, package: found.info });
    deps.log.info('registered on demand', { library: library.id, for: name });
    return (await em.fork().findOne(Library, { id: library.id })) ?? undefined;
  } catch (err) {
    // A concurrent search registered it first.
    if (err instanceof ConflictError) return (await em.fork().findOne(Library, { source: found.ecosystem, sourceUrl: found.info.name })) ?? undefined;
    throw err;
  }
}

/**
 * A library id or version nobody registered, asked for by a query: `/npm/fastify` is registered when the registry
 * has it, `/npm/fastify/5.2.0` registers (and starts indexing) that version of a package library. True when
 * something was registered (or already was, by a concurrent query).
 */
export async function registerReference(deps: IndexDeps, libraryId: string, version: string | undefined): Promise<boolean> {
  if (!deps.config.sources.onDemand) return false;
  const em = deps.orm.em.fork();
  if (version === undefined) {
    const m = /^\/(npm|pypi|crates)\/(.+)$/.exec(libraryId);
    if (!m) return false;
    const lib = await registerOnDemand(deps, `${m[1]}:${m[2]}`, '');
    return lib !== undefined;
  }
  const lib = await findLibrary(em, libraryId);
  if (!isPackageSource(lib.source)) return false;
  try {
    await addVersion(deps, lib.id, { tag: version });
    return true;
  } catch (err) {
    if (err instanceof ConflictError) return true;
    if (err instanceof ValidationError) return false; // no such version in the registry: the query's 404 stands
    throw err;
  }
}

/** What a search or a query may register (docindex/search/context.ts): the two functions above, for these deps. */
export interface OnDemand {
  search(name: string, query: string): Promise<Library | undefined>;
  reference(libraryId: string, version: string | undefined): Promise<boolean>;
  /** A project's lockfile: its direct dependencies registered at their versions (docindex/from-lockfile.ts). */
  lockfile(input: Parameters<typeof librariesFromLockfile>[1]): ReturnType<typeof librariesFromLockfile>;
}

export const onDemand = (deps: IndexDeps): OnDemand => ({
  search: (name, query) => registerOnDemand(deps, name, query),
  reference: (libraryId, version) => registerReference(deps, libraryId, version),
  lockfile: (input) => librariesFromLockfile(deps, input),
});
