import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError, UnavailableError, ValidationError } from '../../core/errors.js';
import { Library, type LibraryVersion } from '../entities/library.js';
import { LibraryRules } from '../entities/snippet.js';
import { activeEmbeddingProvider } from '../embeddings/profiles.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { type LibraryRef, MAX_LIBRARY_LIST, parseLibraryRefList, splitLibraryList } from '../ids.js';
import { rankCandidates, sharedStatistics, type KeywordCandidates, type Ranked } from './keyword.js';
import { budgetWithSections } from './neighbourhood.js';
import { rerankRanked } from '../rerank/stage.js';
import { distinctResults } from './distinct.js';
import { fuse, fusionAlpha, keptRows, keywordCandidatesIn, queryVector as embeddedQuery, rankScope, scopeStampOf, semanticAcrossScopes, type UsedSearchMode } from './search.js';
import { loadSnippets } from './snippet-rows.js';
import { applyBudget, type ContextParams, contextResultsText, snippetJson, type ContextResult, type ContextSnippet, FETCH_LIMIT, indexedLine, referenced, repositoryOf, type RetrievalDeps, type RetrievalOptions, untilIndexed } from './context.js';
import { libraryScore } from './context7.js';

/**
 * Search across libraries (docs/documentation-index.md, "Search across libraries"): `libraryId` names several
 * libraries (`/a/b,/c/d/v1.0.0`, or the parameter repeated) or all of them (`*`). Each scope is searched as one
 * library is, and the lists are merged on one scale: keyword results by their BM25 score (each library's own term
 * statistics weigh a word by how rare it is there, so a score does not grow with a library's size), semantic
 * results by their cosine under the one active model, and in hybrid the two merged lists are fused as in one
 * library (search.ts, `fuse` with `fusionAlpha`); the loaded results are made distinct (distinct.ts). Scopes that
 * are missing or still being indexed are skipped and listed, unless the request named only such scopes: then the
 * first one's error is the answer, as when it is named alone.
 */

/** The most libraries one request searches: named beyond it is 400 TOO_MANY_LIBRARIES; `*` takes the best this many. */
export const MAX_LIBRARIES = MAX_LIBRARY_LIST;
/** Each scope's candidates (per list) before the merge; the merged list is cut to FETCH_LIMIT. */
const SCOPE_DEPTH = FETCH_LIMIT;
/** Scopes searched at once (each holds a database connection while its keyword query runs). */
const CONCURRENCY = 4;

/** One library (or version) searched: where its results come from. */
export interface SearchedLibrary {
  /** The reference as asked for (`/a/b`, `/a/b/v1.0.0`), or the library's id in `*`. */
  requested: string;
  repository: ContextResult['repository'];
  localSource: boolean;
  version: ContextResult['version'];
  rules: string[];
}

export interface SkippedLibrary {
  libraryId: string;
  reason: 'not_found' | 'indexing' | 'over_limit';
  message: string;
}

export interface MultiSnippet extends ContextSnippet {
  libraryId: string;
  versionTag: string | null;
}

export interface MultiContextResult {
  snippets: MultiSnippet[];
  resultCount: number;
  searchMode: UsedSearchMode;
  /** The merged list was reordered by the rerank server (docindex/rerank/). */
  reranked: boolean;
  libraries: SearchedLibrary[];
  skipped: SkippedLibrary[];
  versionTags: Record<string, string>;
}

interface Target {
  requested: string;
  /** The version segment asked for, when one was. */
  versionAsked?: string;
  lib: Library;
  version: LibraryVersion | null;
}

/** `fn` over `items`, at most `limit` at a time, results in the items' order. */
async function bounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const refText = (ref: LibraryRef) => (ref.version === undefined ? ref.libraryId : `${ref.libraryId}/${ref.version}`);

function skippedFor(requested: string, err: unknown): SkippedLibrary | undefined {
  if (err instanceof NotFoundError) return { libraryId: requested, reason: 'not_found', message: err.message };
  if (err instanceof UnavailableError && err.code === 'INDEXING_IN_PROGRESS') return { libraryId: requested, reason: 'indexing', message: err.message };
  return undefined;
}

/** The named scopes, each resolved and waited for as one library is; the missing and unfinished ones skipped. */
async function namedTargets(deps: RetrievalDeps, refs: LibraryRef[], waitMs: number) {
  const settled = await bounded(refs, CONCURRENCY, async (ref) => {
    const em = deps.orm.em.fork();
    try {
      const found = await referenced(deps, em, ref);
      return { ok: { requested: refText(ref), versionAsked: ref.version, ...(await untilIndexed(em, found.lib, found.version, waitMs)) } as Target };
    } catch (err) {
      const skipped = skippedFor(refText(ref), err);
      if (!skipped) throw err;
      return { err, skipped };
    }
  });
  const targets: Target[] = [];
  const seen = new Set<string>();
  for (const s of settled) {
    // Two references to one scope (a tag and its commit) search it once.
    const key = s.ok ? `${s.ok.lib.id}\n${s.ok.version?.id ?? ''}` : '';
    if (s.ok && !seen.has(key)) targets.push(s.ok);
    seen.add(key);
  }
  const skipped = settled.flatMap((s) => (s.skipped ? [s.skipped] : []));
  // Nothing to search: the answer is what naming the first one alone answers.
  if (!targets.length) throw settled.find((s) => s.err)!.err;
  return { targets, skipped };
}

/**
 * `*`: the default scope of every library that has snippets; beyond MAX_LIBRARIES, those whose name, title or
 * description best match the query, then the most recently indexed.
 */
async function allTargets(em: EntityManager, query: string) {
  const libs = await em.find(Library, { totalSnippets: { $gt: 0 } }, { orderBy: { id: 'asc' } });
  const ready = libs.filter((l) => l.state !== 'pending' && l.state !== 'indexing');
  const skipped: SkippedLibrary[] = libs
    .filter((l) => !ready.includes(l))
    .slice(0, MAX_LIBRARIES)
    .map((l) => ({ libraryId: l.id, reason: 'indexing', message: `${l.id} is being indexed` }));
  const ranked = ready
    .map((lib) => ({ lib, score: libraryScore(lib, query, query), at: lib.lastIndexedAt?.getTime() ?? 0 }))
    .sort((a, b) => b.score - a.score || b.at - a.at || (a.lib.id < b.lib.id ? -1 : 1));
  if (ranked.length > MAX_LIBRARIES) {
    const more = ranked.length - MAX_LIBRARIES;
    skipped.push({ libraryId: '*', reason: 'over_limit', message: `${more} more librar${more === 1 ? 'y was' : 'ies were'} not searched (at most ${MAX_LIBRARIES}); name them to search them` });
  }
  const targets: Target[] = ranked.slice(0, MAX_LIBRARIES).map(({ lib }) => ({ requested: lib.id, lib, version: null }));
  return { targets, skipped };
}

/** Parses and bounds the list (400 MISSING_PARAMETER for a malformed one, TOO_MANY_LIBRARIES beyond the bound). */
export function libraryRefs(libraryId: string): LibraryRef[] | 'all' {
  const count = splitLibraryList(libraryId).length;
  if (count > MAX_LIBRARIES) throw new ValidationError(`libraryId names ${count} libraries; at most ${MAX_LIBRARIES} are searched at once`, 'TOO_MANY_LIBRARIES');
  const refs = parseLibraryRefList(libraryId);
  if (!refs) throw new ValidationError(`libraryId "${libraryId.slice(0, 200)}" is not a comma-separated list of /owner/repo or /owner/repo/version, or *`, 'MISSING_PARAMETER');
  return refs;
}

type Lists = { keyword?: Ranked[]; semantic?: Ranked[] | null };

/**
 * One scope's lists: keyword candidates (BM25, before page evidence: they are weighed on one scale with the other
 * scopes' first) and semantic (cosine) as asked; a semantic list of null when the scope has no vectors to use.
 */
async function scopeLists(
  deps: RetrievalDeps,
  t: Target,
  query: string,
  want: { keyword: boolean; semantic: boolean },
  queryVector?: Promise<Float32Array>,
): Promise<{ keyword?: KeywordCandidates; semantic?: Ranked[] | null }> {
  const em = deps.orm.em.fork();
  const scope = { repositoryId: t.lib.id, versionId: t.version?.id ?? null };
  const stamp = scopeStampOf(t.lib, t.version);
  // Each scope's own lists, not reranked: the merged list is reranked once (retrieveAcrossLibraries).
  const req = { scope, query, mode: 'semantic' as const, alpha: 0.5, limit: SCOPE_DEPTH, stamp, ...(queryVector && { queryVector }) };
  const semantic = want.semantic ? await rankScope(deps, em, req) : undefined;
  return {
    ...(want.keyword && { keyword: await keywordCandidatesIn(deps, em, req, SCOPE_DEPTH) }),
    ...(semantic && { semantic: semantic.mode === 'semantic' ? semantic.ranked : null }),
  };
}

/** Lists of several scopes as one, best score first (ties: snippet id), cut to `limit`. */
function merged(lists: Ranked[][], limit: number): Ranked[] {
  return lists
    .flat()
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}

/** The search over every target, on one scale (see the top of this file). */
async function searchAll(deps: RetrievalDeps, targets: Target[], p: ContextParams): Promise<{ mode: UsedSearchMode; ranked: Ranked[]; owner: Map<string, Target> }> {
  const query = p.query.trim();
  const owner = new Map<string, Target>();
  const listsOf = async (want: { keyword: boolean; semantic: boolean }, queryVector?: Promise<Float32Array>): Promise<Lists[]> => {
    const found = await bounded(targets, CONCURRENCY, (t) => scopeLists(deps, t, query, want, queryVector));
    // Keyword scores on one scale: each scope's candidates weighed by the statistics of all of them together.
    const rankings = found.flatMap((l) => (l.keyword ? [l.keyword] : []));
    const shared = rankings.length > 1 ? sharedStatistics(rankings) : undefined;
    const lists = found.map((l) => ({ ...l, keyword: want.keyword ? rankCandidates(l.keyword, SCOPE_DEPTH, shared) : undefined }));
    lists.forEach((l, i) => [...(l.keyword ?? []), ...(l.semantic ?? [])].forEach((r) => owner.set(r.id, targets[i]!)));
    return lists;
  };
  const byKeyword = async (mode: 'keyword' | 'keyword_fallback') => ({ mode, ranked: merged((await listsOf({ keyword: true, semantic: false })).map((l) => l.keyword!), FETCH_LIMIT), owner });
  if (p.searchMode === 'keyword') return byKeyword('keyword');
  // As in one library: auto is hybrid with an active provider, else keyword; without one, semantic and hybrid fall back.
  const provider = await activeEmbeddingProvider(deps.orm.em.fork(), deps.config);
  if (!provider) return byKeyword(p.searchMode === 'auto' ? 'keyword' : 'keyword_fallback');
  const mode = p.searchMode === 'auto' ? 'hybrid' : p.searchMode;
  const want = { keyword: mode === 'hybrid' && p.alpha < 1, semantic: mode === 'semantic' || p.alpha > 0 };
  // The query is embedded once for every scope. A failure is each scope's to handle (it answers by keyword); the
  // catch only keeps a rejection no scope awaited (none had vectors) from going unhandled.
  const queryVector = want.semantic ? embeddedQuery(deps.config, provider, query) : undefined;
  queryVector?.catch(() => undefined);
  const depth = SCOPE_DEPTH * targets.length;
  // With SEARCH_VECTORS=pgvector one statement gives every scope's semantic list; the keyword lists are per scope.
  const inPostgres = deps.config.searchVectors === 'pgvector' && queryVector;
  const [lists, across] = await Promise.all([
    listsOf(inPostgres ? { keyword: want.keyword, semantic: false } : want, queryVector),
    inPostgres ? semanticInPostgres(deps, targets, provider, inPostgres, mode === 'semantic' ? FETCH_LIMIT : depth, owner) : undefined,
  ]);
  // A scope without vectors has no cosines to weigh against the others': all answer by keyword, as one library does.
  if (want.semantic && (inPostgres ? !across : !lists.every((l) => l.semantic))) return byKeyword('keyword_fallback');
  const semantic = across ? [across] : lists.map((l) => l.semantic ?? []);
  if (mode === 'semantic') return { mode, ranked: merged(semantic, FETCH_LIMIT), owner };
  return { mode, ranked: fuse(merged(lists.map((l) => l.keyword ?? []), depth), merged(semantic, depth), fusionAlpha(p.alpha, p.query), FETCH_LIMIT), owner };
}

/** The targets' semantic list in one statement (SEARCH_VECTORS=pgvector; search.ts, `semanticAcrossScopes`), owners noted. */
async function semanticInPostgres(deps: RetrievalDeps, targets: Target[], provider: EmbeddingProvider, queryVector: Promise<Float32Array>, depth: number, owner: Map<string, Target>): Promise<Ranked[] | undefined> {
  const scopes = targets.map((t) => ({
    scope: { repositoryId: t.lib.id, versionId: t.version?.id ?? null },
    stamp: scopeStampOf(t.lib, t.version),
  }));
  const found = await semanticAcrossScopes(deps, deps.orm.em.fork(), scopes, provider, queryVector, depth);
  if (!found) return undefined;
  const byScope = new Map(targets.map((t) => [`${t.lib.id}\n${t.version?.id ?? ''}`, t]));
  for (const r of found) owner.set(r.id, byScope.get(`${r.repositoryId}\n${r.versionId ?? ''}`)!);
  return found.map(({ id, score }) => ({ id, score }));
}

async function described(em: EntityManager, t: Target): Promise<SearchedLibrary> {
  const rules = await em.findOne(LibraryRules, { repositoryId: t.lib.id, versionId: t.version?.id ?? null });
  return {
    requested: t.requested,
    repository: repositoryOf(t.lib, t.version),
    localSource: t.lib.source === 'local',
    version: t.version ? { requested: t.versionAsked ?? t.version.tag, resolved: t.version.tag, id: t.version.id } : null,
    rules: rules?.rules ?? [],
  };
}

/**
 * Context from several libraries (or `*`, all): checks in the order of one library's (libraryId, query, the list's
 * parse, then each scope), searches each scope, merges, then loads and budgets the merged list as one.
 */
export async function retrieveAcrossLibraries(deps: RetrievalDeps, p: ContextParams, o: RetrievalOptions = {}): Promise<MultiContextResult> {
  if (!p.libraryId.trim()) throw new ValidationError('libraryId is required', 'MISSING_PARAMETER');
  if (!p.query.trim()) throw new ValidationError('query is required', 'MISSING_PARAMETER');
  const refs = libraryRefs(p.libraryId);
  const em = deps.orm.em.fork();
  const { targets, skipped } = refs === 'all' ? await allTargets(em, p.query) : await namedTargets(deps, refs, o.waitMs ?? 0);
  const found = targets.length ? await searchAll(deps, targets, p) : { mode: 'keyword' as const, ranked: [], owner: new Map<string, Target>() };
  const { ranked, reranked } = await rerankRanked(deps, em, p.query.trim(), found.ranked);
  const stampOf = (id: string) => {
    const t = found.owner.get(id);
    return t && scopeStampOf(t.lib, t.version);
  };
  const keptRowsOf = keptRows(deps.config, stampOf);
  const fetched = distinctResults(await loadSnippets(em, ranked, keptRowsOf));
  const kept = p.type === 'txt' ? await budgetWithSections(em, fetched, p.tokens, keptRowsOf) : applyBudget(fetched, p.tokensGiven ? p.tokens : undefined);
  const snippets = kept.map((s) => {
    const t = found.owner.get(s.id);
    return { ...s, libraryId: t?.lib.id ?? '', versionTag: t?.version?.tag ?? null };
  });
  const versionTags: Record<string, string> = {};
  for (const t of targets) if (t.version) versionTags[t.version.id] = t.version.tag;
  const libraries = await Promise.all(targets.map((t) => described(em.fork(), t)));
  return { snippets, resultCount: snippets.length, searchMode: found.mode, reranked, libraries, skipped, versionTags };
}

/** GET /api/v1/context's JSON for several libraries. */
export function multiContextJson(r: MultiContextResult) {
  return {
    snippets: r.snippets.map((s) => ({ ...snippetJson(s), libraryId: s.libraryId, versionTag: s.versionTag })),
    resultCount: r.resultCount,
    searchMode: r.searchMode,
    reranked: r.reranked,
    libraries: r.libraries,
    skipped: r.skipped,
    versionTags: r.versionTags,
  };
}

const named = (id: string, tag: string | null) => (tag ? `${id} (${tag})` : id);

/** GET /api/v1/context's text for several libraries: as for one, each result naming its library. */
export function multiContextText(r: MultiContextResult): string {
  const parts: string[] = [];
  const rules = r.libraries.filter((l) => l.rules.length);
  if (rules.length) parts.push(['## Rules', ...rules.map((l) => ['', `### ${l.requested}`, '', ...l.rules.map((rule) => `- ${rule}`)].join('\n'))].join('\n'));
  parts.push(contextResultsText(r.snippets, (s) => [`Library: ${named(s.libraryId, s.versionTag)}`]));
  const footer = r.libraries.flatMap((l) => [
    `Repository: ${l.repository.title} (${l.repository.id})${l.version ? `, version ${l.version.resolved}` : ''}`,
    ...(l.repository.indexedAt ? [indexedLine(l)] : []),
  ]);
  for (const s of r.skipped) footer.push(`Skipped: ${s.libraryId} (${s.reason}: ${s.message})`);
  footer.push(`Result count: ${r.resultCount}`);
  parts.push(footer.join('\n'));
  return parts.join('\n\n') + '\n';
}
