import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import { activeEmbeddingProvider, type ActiveProfileStamp } from '../embeddings/profiles.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { rerankRanked } from '../rerank/stage.js';
import { EVIDENCE_POOL, withSiblingSimilarity } from './evidence.js';
import { declarationPages, rememberScopePages } from './page-name-lookup.js';
import { keywordCandidates, rankCandidates, type KeywordCandidates, type Ranked, type Scope } from './keyword.js';
import { hasIdentifier } from './keyword-plan.js';
import { indexCandidates, type KeywordIndex, KeywordIndexTooLargeError, loadKeywordIndex } from './keyword-index.js';
import { pgvectorTopK, scopeVectors, type ScopeVectors } from './pgvector.js';
import { QueryVectors } from './query-vectors.js';
import { ScopeCache } from './scope-cache.js';
import { type KeptRows, SnippetRows } from './snippet-rows.js';
import { UnsupportedQueryError } from './tsquery.js';
import { ScanPool } from './scan-pool.js';
import { timed, timedSync, type Timings } from './timings.js';
import { loadMatrix, type Matrix, MatrixTooLargeError, topK, VectorCache } from './vectors.js';

export const SEARCH_MODES = ['auto', 'keyword', 'semantic', 'hybrid'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
/** What actually ran: `keyword_fallback` when semantic or hybrid was asked for and no vectors could be used. */
export type UsedSearchMode = 'keyword' | 'semantic' | 'hybrid' | 'keyword_fallback';

/**
 * The k of reciprocal-rank fusion. Smaller than the usual 60: with 60, a snippet first in one list and absent from
 * the other scored below one about 30th in both, so either list's clear winner was buried (docs/ranking.md).
 */
export const RRF_K = 10;
/** Added (times the list's weight) for first place in a list, and for second or third: a clear winner stays on top. */
const TOP_RANK_BONUS = [0.05, 0.02, 0.02];
/**
 * For a query that names something in code (keyword-plan.ts, `hasIdentifier`), the keyword list's weight is multiplied
 * by this: the docs spell an identifier exactly as asked, a sentence embedding only approximately. 7/3 makes the
 * default alpha 0.5 count as 0.3 (docs/ranking.md, "Semantic and hybrid").
 */
export const IDENTIFIER_KEYWORD_WEIGHT = 7 / 3;
/** Candidates taken from each list before fusion. */
const FUSION_DEPTH = 100;

export interface SearchRequest {
  scope: Scope;
  query: string;
  mode: SearchMode;
  /** 0 = keyword only, 1 = semantic only. */
  alpha: number;
  limit: number;
  /** Changes whenever a re-index changes the scope (`scopeStampOf`; see vectors.ts). */
  stamp: string;
  /** The query's vector, when the caller embeds it once for several scopes (docindex/search/multi-library.ts). */
  queryVector?: Promise<Float32Array>;
  /** Phases kept for the answer's Server-Timing header (docindex/search/timings.ts). */
  timings?: Timings;
  /** The active embedding profile, when the caller read it with the scope (docindex/search/context.ts). */
  activeProfile?: ActiveProfileStamp;
}

export interface SearchResult {
  mode: UsedSearchMode;
  ranked: Ranked[];
  /** The first results were reordered by the rerank server (docindex/rerank/stage.ts). */
  reranked: boolean;
}

export interface SearchDeps {
  config: Config;
  log: Logger;
}

let cache: VectorCache | undefined;
let keywordIndexes: ScopeCache<KeywordIndex> | undefined;
let pool: ScanPool | undefined;
let snippetRows: SnippetRows | undefined;
let queryVectors = new WeakMap<EmbeddingProvider, QueryVectors>();
/** The process's vector cache and scan threads (one each per API or MCP process). */
export function vectorCache(config: Config): VectorCache {
  cache ??= new VectorCache(config.searchVectorCacheBytes);
  return cache;
}

/**
 * How `loadSnippets` keeps the rows of one answer's scopes in this process (snippet-rows.ts), with the stamp of each
 * ranked id's scope; undefined when SEARCH_SNIPPET_CACHE_MB is 0.
 */
export function keptRows(config: Config, stampOf: KeptRows['stampOf']): KeptRows | undefined {
  if (config.searchSnippetCacheBytes <= 0) return undefined;
  snippetRows ??= new SnippetRows(config.searchSnippetCacheBytes);
  return { rows: snippetRows, stampOf };
}

/**
 * The query's vector under the provider (query-vectors.ts): kept for the questions asked lately unless
 * SEARCH_QUERY_VECTORS is 0, and embedded together with the others that wait while the provider is busy.
 */
export function queryVector(config: Config, provider: EmbeddingProvider, query: string): Promise<Float32Array> {
  let kept = queryVectors.get(provider);
  if (!kept) {
    kept = new QueryVectors(provider, config.searchQueryVectors);
    queryVectors.set(provider, kept);
  }
  return kept.get(query);
}

function scanPool(config: Config): ScanPool | undefined {
  if (config.searchThreads > 0) pool ??= new ScanPool(config.searchThreads);
  return pool;
}

/** A time as `SearchRequest.stamp`; a scope's is `scopeStampOf`'s. */
export function scopeStamp(at: Date | null | undefined): string {
  return String(at?.getTime() ?? 0);
}

/**
 * What `SearchRequest.stamp` is for a scope, the key of its cached indexes: when what its search reads last changed
 * (`searchStamp`, moved by an indexing run that changed snippets or vectors), else when it was last indexed (a scope
 * written by other means). A re-index that found nothing new leaves it, so no process reads the scope again.
 */
export function scopeStampOf(
  lib: { searchStamp?: Date | null; lastIndexedAt?: Date | null },
  version: { searchStamp?: Date | null; indexedAt?: Date | null } | null | undefined,
): string {
  return scopeStamp(version ? (version.searchStamp ?? version.indexedAt) : (lib.searchStamp ?? lib.lastIndexedAt));
}

/**
 * The scope's matrix under the provider's profile, from this process's cache or loaded into it: one key for searches
 * and for the warm-up after indexing (warm.ts), so what the warm-up loads is what the next query finds.
 */
export function scopeMatrix(config: Config, em: EntityManager, scope: Scope, provider: Pick<EmbeddingProvider, 'profileId' | 'model'>, stamp: string): Promise<Matrix> {
  const key = `${scope.repositoryId}|${scope.versionId ?? ''}|${provider.profileId}|${provider.model}|${stamp}`;
  return vectorCache(config).get(key, () => loadMatrix(em, scope, provider.profileId, scanPool(config)));
}

/**
 * A scope's vector count and length in PostgreSQL (SEARCH_VECTORS=pgvector), read once per index stamp: one small
 * map per process, emptied when it grows past a thousand scopes.
 */
const pgvectorScopes = new Map<string, Promise<ScopeVectors>>();
function scopeVectorsCached(em: EntityManager, scope: Scope, profileId: string, stamp: string): Promise<ScopeVectors> {
  const key = `${scope.repositoryId}|${scope.versionId ?? ''}|${profileId}|${stamp}`;
  let found = pgvectorScopes.get(key);
  if (!found) {
    if (pgvectorScopes.size >= 1000) pgvectorScopes.clear();
    found = scopeVectors(em, scope, profileId);
    pgvectorScopes.set(key, found);
    found.catch(() => pgvectorScopes.delete(key));
  }
  return found;
}

/** How long a scope whose keyword index failed to load is ranked in SQL before the index is tried again. */
const KEYWORD_INDEX_RETRY_MS = 60_000;
const keywordIndexFailures = new Map<string, number>();
const keywordKey = (scope: Scope, stamp: string) => `${scope.repositoryId}|${scope.versionId ?? ''}|${stamp}`;

/**
 * Loads the scope's keyword index into this process's cache (or finds it there): undefined when the cache is off, the
 * load failed lately, or the index is too big to keep. A failure is logged and remembered for a minute, so queries
 * meanwhile rank in SQL instead of loading it again and again; an index too big is remembered until a re-index
 * changes the scope, and its load stops once it outgrows the cache instead of building it whole to be dropped.
 */
export async function loadScopeKeywordIndex(deps: SearchDeps, em: EntityManager, scope: Scope, stamp: string): Promise<KeywordIndex | undefined> {
  if (deps.config.searchKeywordCacheBytes <= 0) return undefined;
  keywordIndexes ??= new ScopeCache(deps.config.searchKeywordCacheBytes);
  const key = keywordKey(scope, stamp);
  if (Date.now() - (keywordIndexFailures.get(key) ?? 0) < KEYWORD_INDEX_RETRY_MS) return undefined;
  // One load at a time (keywordIndex): a query never gets here while one runs, but the warm-up after indexing
  // (warm.ts) does, and waits its turn. The check and `get` starting the load run in one step, so no other starts between.
  while (keywordIndexes.loads && !keywordIndexes.isLoading(key)) await keywordIndexes.settled();
  try {
    return await keywordIndexes.get(key, async () => {
      const index = await loadKeywordIndex(em.fork(), scope, deps.config.searchKeywordCacheBytes);
      // Its pages' paths too, which the ranking reads for its candidates (page-name-lookup.ts); without them it reads
      // them as it goes, so a failure here only costs those reads and is not worth a warning (a warm-up still running
      // at shutdown meets the closed pool here).
      await rememberScopePages(em.fork(), scope).catch((err: Error) => deps.log.debug('could not read the pages of a keyword index', { library: scope.repositoryId, error: err.message }));
      return index;
    });
  } catch (err) {
    if (err instanceof KeywordIndexTooLargeError) {
      // Its size changes only when a re-index changes it (a new stamp, a new key): never loaded again until then.
      keywordIndexFailures.set(key, Infinity);
      deps.log.warn('the keyword index is bigger than SEARCH_KEYWORD_CACHE_MB; ranking in SQL', { library: scope.repositoryId, mb: Math.ceil(err.bytes / 1048576) });
      return undefined;
    }
    if (!keywordIndexFailures.has(key)) deps.log.warn('could not load the keyword index; ranking in SQL', { library: scope.repositoryId, error: (err as Error).message });
    keywordIndexFailures.set(key, Date.now());
  }
  return undefined;
}

/**
 * The scope's keyword index if it is loaded; otherwise undefined, and its load started in the background (with a
 * fresh EntityManager: the request's may be done by then), so the SQL ranking answers until it is ready. One such
 * load runs at a time: a load holds up to twice its index's size while it reads, so queries to many libraries at
 * once do not add those up (a replica's peak memory: bench/README.md, "Scale"); a scope asked for meanwhile is
 * loaded at a later query. Once the cache is half full, a scope's index is loaded at its second query within ten
 * minutes (ScopeCache.wanted).
 */
export function keywordIndex(deps: SearchDeps, em: EntityManager, scope: Scope, stamp: string): KeywordIndex | undefined {
  const key = keywordKey(scope, stamp);
  const ready = keywordIndexes?.peek(key);
  if (!ready && !keywordIndexes?.loads && (keywordIndexes?.wanted(key) ?? true)) void loadScopeKeywordIndex(deps, em, scope, stamp);
  return ready;
}

/** What this process's keyword indexes hold, and how many are loading. */
export function keywordIndexCacheSize(): { entries: number; bytes: number; loads: number } {
  return { ...(keywordIndexes?.size ?? { entries: 0, bytes: 0 }), loads: keywordIndexes?.loads ?? 0 };
}

/** Keyword search in a scope: from its in-process index when that is loaded, else by the SQL ranking. */
async function keywordRanked(deps: SearchDeps, em: EntityManager, req: SearchRequest, limit: number): Promise<Ranked[]> {
  return rankCandidates(await keywordCandidatesIn(deps, em, req, limit), limit);
}

/**
 * A scope's keyword candidates before page evidence, with their statistics (keyword.ts, `rankCandidates`), for a
 * search across scopes that weighs them on one scale first: from the in-process index when loaded, else from SQL.
 */
export async function keywordCandidatesIn(deps: SearchDeps, em: EntityManager, req: SearchRequest, limit: number): Promise<KeywordCandidates | undefined> {
  const index = keywordIndex(deps, em, req.scope, req.stamp);
  if (index) {
    try {
      return await indexCandidates(em, index, req.query, limit);
    } catch (err) {
      if (!(err instanceof UnsupportedQueryError)) throw err;
    }
  }
  return keywordCandidates(em, req.scope, req.query, limit, { candidates: deps.config.searchRankCandidates });
}

/** Drops the cached vectors, keyword indexes, snippet rows and query vectors and stops the scan threads (at shutdown). */
export async function closeSearch(): Promise<void> {
  cache?.clear();
  keywordIndexes?.clear();
  keywordIndexes = undefined;
  keywordIndexFailures.clear();
  snippetRows?.clear();
  snippetRows = undefined;
  queryVectors = new WeakMap();
  await pool?.close();
  cache = undefined;
  pool = undefined;
}

/**
 * Weighted reciprocal-rank fusion with a top-rank bonus: each list contributes weight * (1 / (k + rank) + bonus(rank))
 * for d, ranks from 1, weights 1 - alpha (keyword) and alpha (semantic), a list that does not have d contributing 0.
 * Snippets scoring 0 (only in a list weighted 0) are dropped, so alpha 0 is exactly keyword search and alpha 1
 * exactly semantic. Ties: snippet id ascending.
 */
export function fuse(keyword: Ranked[], semantic: Ranked[], alpha: number, limit: number): Ranked[] {
  const scores = new Map<string, number>();
  const add = (list: Ranked[], weight: number) =>
    list.forEach((r, i) => scores.set(r.id, (scores.get(r.id) ?? 0) + weight * (1 / (RRF_K + i + 1) + (TOP_RANK_BONUS[i] ?? 0))));
  add(keyword, 1 - alpha);
  add(semantic, alpha);
  return [...scores]
    .filter(([, s]) => s > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([id, score]) => ({ id, score }));
}

/**
 * The alpha fusion uses for a query: the one asked for, moved towards keyword when the query names an identifier.
 * 0 and 1 stay one list alone.
 */
export function fusionAlpha(alpha: number, query: string): number {
  if (alpha <= 0 || alpha >= 1 || !hasIdentifier(query)) return alpha;
  return alpha / (alpha + (1 - alpha) * IDENTIFIER_KEYWORD_WEIGHT);
}

/** Runs a search in one scope, then the optional reranking stage over its first results (off unless a rerank profile is active or RERANK_URL is set). */
export async function search(deps: SearchDeps, em: EntityManager, req: SearchRequest): Promise<SearchResult> {
  const found = await rankScope(deps, em, req);
  return { mode: found.mode, ...(await timed(req.timings, 'rerank', () => rerankRanked(deps, em, req.query, found.ranked))) };
}

/**
 * A search in one scope without the reranking stage, for callers that merge several scopes and rerank the merged
 * list once (`rerankRanked`, docindex/rerank/stage.ts). `auto` is hybrid when a provider is active, else keyword.
 * Semantic or hybrid with no active provider, no vectors in the scope, or a provider that fails on the query
 * answers by keyword with mode `keyword_fallback`.
 */
export async function rankScope(deps: SearchDeps, em: EntityManager, req: SearchRequest): Promise<Omit<SearchResult, 'reranked'>> {
  const keyword = (limit: number) => timed(req.timings, 'keyword', () => keywordRanked(deps, em, req, limit));
  if (req.mode === 'keyword') return { mode: 'keyword', ranked: await keyword(req.limit) };
  const provider = await timed(req.timings, 'profile', () => activeEmbeddingProvider(em, deps.config, req.activeProfile));
  const wanted = req.mode === 'auto' ? (provider ? 'hybrid' : 'keyword') : req.mode;
  if (wanted === 'keyword') return { mode: 'keyword', ranked: await keyword(req.limit) };
  const fallback = async (): Promise<Omit<SearchResult, 'reranked'>> => ({ mode: 'keyword_fallback', ranked: await keyword(req.limit) });
  if (!provider) return fallback();

  const semanticRanked = async (depth: number): Promise<Ranked[] | undefined> => {
    let matrix: Matrix | undefined;
    let inPostgres: ScopeVectors | undefined;
    if (deps.config.searchVectors === 'pgvector') {
      inPostgres = await scopeVectorsCached(em, req.scope, provider.profileId, req.stamp);
      if (!inPostgres.rows) return undefined;
    } else {
      try {
        matrix = await scopeMatrix(deps.config, em, req.scope, provider, req.stamp);
      } catch (err) {
        if (!(err instanceof MatrixTooLargeError)) throw err;
        deps.log.warn('answering by keyword', { error: err.message });
        return undefined;
      }
      if (!matrix.ids.length) return undefined;
    }
    let vector: Float32Array;
    try {
      vector = await timed(req.timings, 'embed', () => req.queryVector ?? queryVector(deps.config, provider, req.query));
    } catch (err) {
      deps.log.warn('embedding the query failed; answering by keyword', { error: (err as Error).message });
      return undefined;
    }
    if (vector.length !== (matrix?.dims ?? inPostgres?.dims)) return undefined;
    const depthWanted = Math.max(depth, EVIDENCE_POOL);
    const candidates = await timed(req.timings, 'scan', () =>
      matrix ? topK(matrix, vector, depthWanted) : pgvectorTopK(em, [{ scope: req.scope, rows: inPostgres!.rows }], provider.profileId, vector, depthWanted),
    );
    return withSiblingSimilarity(candidates, depth, await declarationPages(em, candidates, matrix));
  };
  const semantic = (depth: number) => timed(req.timings, 'semantic', () => semanticRanked(depth));

  if (wanted === 'semantic') {
    const ranked = await semantic(req.limit);
    return ranked ? { mode: 'semantic', ranked } : fallback();
  }
  // hybrid: skip a side weighted 0.
  const [kw, sem] = await Promise.all([
    req.alpha < 1 ? keyword(FUSION_DEPTH) : Promise.resolve([]),
    req.alpha > 0 ? semantic(FUSION_DEPTH) : Promise.resolve([]),
  ]);
  if (!sem) return fallback();
  return { mode: 'hybrid', ranked: timedSync(req.timings, 'fuse', () => fuse(kw, sem, fusionAlpha(req.alpha, req.query), req.limit)) };
}

/**
 * The semantic list of several scopes searched together (docindex/search/multi-library.ts) with SEARCH_VECTORS=pgvector:
 * one exact statement over all of them (or each large one through its HNSW index: pgvector.ts) instead of one per scope,
 * with each page's second-best match counted as in one scope. Undefined when a scope has no vectors of the active
 * profile or the query cannot be embedded: the caller answers by keyword, as one library does.
 */
export async function semanticAcrossScopes(
  deps: SearchDeps,
  em: EntityManager,
  scopes: { scope: Scope; stamp: string }[],
  provider: EmbeddingProvider,
  queryVector: Promise<Float32Array>,
  depth: number,
): Promise<(Ranked & { repositoryId: string; versionId: string | null })[] | undefined> {
  const sizes = await Promise.all(scopes.map((s) => scopeVectorsCached(em, s.scope, provider.profileId, s.stamp)));
  if (sizes.some((v) => !v.rows)) return undefined;
  let vector: Float32Array;
  try {
    vector = await queryVector;
  } catch (err) {
    deps.log.warn('embedding the query failed; answering by keyword', { error: (err as Error).message });
    return undefined;
  }
  if (sizes.some((v) => v.dims !== vector.length)) return undefined;
  const sized = scopes.map((s, i) => ({ scope: s.scope, rows: sizes[i]!.rows }));
  const found = await pgvectorTopK(em, sized, provider.profileId, vector, Math.max(depth, EVIDENCE_POOL));
  const owner = new Map(found.map((r) => [r.id, r]));
  return withSiblingSimilarity(found, depth, await declarationPages(em, found)).map((r) => ({ ...r, repositoryId: owner.get(r.id)!.repositoryId, versionId: owner.get(r.id)!.versionId }));
}
