import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../core/config.js';
import { NotFoundError, UnavailableError, ValidationError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { type Library, Library as LibraryEntity, LibraryVersion } from '../entities/library.js';
import { LibraryRules } from '../entities/snippet.js';
import type { Orm } from '../../db/orm.js';
import { ACTIVE_PROFILE_SQL, type ActiveProfileStamp } from '../embeddings/profiles.js';
import { findLibrary } from '../service.js';
import { parseLibraryRef } from '../ids.js';
import type { OnDemand } from '../on-demand.js';
import { distinctResults } from './distinct.js';
import { budgetWithSections } from './neighbourhood.js';
import { keptRows, scopeStampOf, search, SEARCH_MODES, type SearchMode, type UsedSearchMode } from './search.js';
import { loadSnippets, type SnippetRow } from './snippet-rows.js';
import { timed, timedSync, type Timings } from './timings.js';

/**
 * Context retrieval (docs/documentation-index.md, "Search and context"): GET /api/v1/context, the Context7 v2 endpoint and the MCP
 * `query-docs` tool all call `retrieveContext`.
 */

export interface RetrievalDeps {
  config: Config;
  orm: Orm;
  log: Logger;
  /** Registering what nobody registered (docindex/on-demand.ts); absent where jobs cannot be started (stdio MCP). */
  onDemand?: OnDemand;
}

/** How long a query waits for a library being indexed (the assistants' paths: MCP and Context7's v2). */
export interface RetrievalOptions {
  waitMs?: number;
  /** Where the answer's time goes, for its Server-Timing header (docindex/search/timings.ts). */
  timings?: Timings;
}

export const DEFAULT_TOKENS = 10_000;
/**
 * Longer queries are cut here (at a word boundary when there is one): a question to documentation fits, and every
 * step after (parsing, one SQL term per word, embedding) stays bounded whatever a client sends.
 */
export const MAX_QUERY_CHARS = 1000;
/** Results fetched from search before the token budget. */
export const FETCH_LIMIT = 50;

export interface ContextParams {
  libraryId: string;
  query: string;
  type: 'json' | 'txt';
  tokens: number;
  /** A `tokens` parameter was given (even an invalid one): the budget applies. */
  tokensGiven: boolean;
  searchMode: SearchMode;
  alpha: number;
}

const str = (v: unknown): string | undefined => (Array.isArray(v) ? str(v[0]) : typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

/** A query cut to MAX_QUERY_CHARS, at a word boundary when there is one in its second half. */
function bounded(query: string): string {
  if (query.length <= MAX_QUERY_CHARS) return query;
  const cut = query.slice(0, MAX_QUERY_CHARS);
  const space = cut.search(/\s\S*$/);
  return space > MAX_QUERY_CHARS / 2 ? cut.slice(0, space) : cut;
}

/** The defaults and coercions (docs/documentation-index.md, "Search and context"); nothing here rejects (blank libraryId and query are checked by retrieveContext). */
export function contextParams(raw: Record<string, unknown>, defaults: { type?: 'json' | 'txt' } = {}): ContextParams {
  const type = str(raw.type)?.trim().toLowerCase();
  const tokensRaw = str(raw.tokens);
  const tokensNum = tokensRaw?.trim() ? Number(tokensRaw) : NaN;
  const mode = str(raw.searchMode)?.trim().toLowerCase();
  const alphaRaw = str(raw.alpha);
  const alphaNum = alphaRaw?.trim() ? Number(alphaRaw) : NaN;
  return {
    // A repeated libraryId is a list, as its comma-separated form (docindex/search/multi-library.ts).
    libraryId: Array.isArray(raw.libraryId) ? raw.libraryId.filter((v) => typeof v === 'string').join(',') : (str(raw.libraryId) ?? ''),
    query: bounded(str(raw.query) ?? ''),
    type: type === 'txt' ? 'txt' : type === 'json' ? 'json' : (defaults.type ?? 'json'),
    tokens: Number.isFinite(tokensNum) && tokensNum >= 1 ? Math.floor(tokensNum) : DEFAULT_TOKENS,
    tokensGiven: tokensRaw !== undefined,
    searchMode: (SEARCH_MODES as readonly string[]).includes(mode ?? '') ? (mode as SearchMode) : 'auto',
    alpha: Number.isFinite(alphaNum) ? Math.min(1, Math.max(0, alphaNum)) : 0.5,
  };
}

export interface ContextSnippet extends SnippetRow {
  score: number;
}

export interface ContextResult {
  snippets: ContextSnippet[];
  resultCount: number;
  rules: string[];
  searchMode: UsedSearchMode;
  /** The rerank server reordered the first results (docindex/rerank/). */
  reranked: boolean;
  repository: { id: string; title: string; source: string; sourceUrl: string; branch: string | null; indexedVersion: string | null; indexedAt: string | null };
  localSource: boolean;
  version: { requested: string; resolved: string; id: string } | null;
  /** Version id -> tag, for the versions of the returned snippets. */
  versionTags: Record<string, string>;
}

/** Exact tag first, then a commit-hash prefix of 7+ characters; else 404 VERSION_NOT_FOUND. */
export async function resolveVersion(em: EntityManager, libraryId: string, requested: string): Promise<LibraryVersion> {
  const exact = await em.findOne(LibraryVersion, { repositoryId: libraryId, tag: requested });
  if (exact) return exact;
  if (/^[0-9a-f]{7,64}$/i.test(requested)) {
    const byCommit = await em.find(
      LibraryVersion,
      { repositoryId: libraryId, commitHash: { $like: `${requested.toLowerCase()}%` } },
      { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 1 },
    );
    if (byCommit[0]) return byCommit[0];
  }
  throw new NotFoundError(`Version ${requested} of ${libraryId} not found (neither a tag nor a commit-hash prefix of 7+ characters)`, 'VERSION_NOT_FOUND');
}

/**
 * Budget: when it applies, snippets are kept in rank order while their tokens fit; the first snippet is always
 * kept, even alone over the budget, so a match is never hidden. Without it every fetched snippet is returned.
 */
export function applyBudget<T extends { tokenCount: number }>(snippets: T[], budget: number | undefined): T[] {
  if (budget === undefined) return snippets;
  const out: T[] = [];
  let used = 0;
  for (const s of snippets) {
    if (out.length && used + s.tokenCount > budget) break;
    out.push(s);
    used += s.tokenCount;
  }
  return out;
}

/** The library and version a reference names; on demand, one a registry has is registered and starts indexing. */
export async function referenced(deps: RetrievalDeps, em: EntityManager, ref: { libraryId: string; version: string | undefined }) {
  let lib = await em.findOne(LibraryEntity, { id: ref.libraryId });
  if (!lib && deps.onDemand && (await deps.onDemand.reference(ref.libraryId, undefined))) lib = await em.findOne(LibraryEntity, { id: ref.libraryId });
  if (!lib) lib = await findLibrary(em, ref.libraryId); // 404 LIBRARY_NOT_FOUND
  if (ref.version === undefined) return { lib, version: null };
  try {
    return { lib, version: await resolveVersion(em, lib.id, ref.version) };
  } catch (err) {
    if (!(err instanceof NotFoundError) || !deps.onDemand || !(await deps.onDemand.reference(lib.id, ref.version))) throw err;
    return { lib, version: await resolveVersion(em.fork(), lib.id, ref.version) };
  }
}

const isIndexing = (state: string) => state === 'pending' || state === 'indexing';

/**
 * Waits up to `waitMs` for a scope being indexed to be ready; then answers 503 INDEXING_IN_PROGRESS with the job's
 * progress in words an assistant can relay, and when to try again.
 */
export async function untilIndexed(em: EntityManager, lib: Library, version: LibraryVersion | null, waitMs: number): Promise<{ lib: Library; version: LibraryVersion | null }> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const state = version ? version.state : lib.state;
    if (!isIndexing(state)) return { lib, version };
    const left = deadline - Date.now();
    if (left <= 0) throw await stillIndexing(em, lib, version);
    await new Promise((r) => setTimeout(r, Math.min(500, left)));
    const fresh = em.fork();
    lib = (await fresh.findOne(LibraryEntity, { id: lib.id })) ?? lib;
    version = version ? ((await fresh.findOne(LibraryVersion, { id: version.id })) ?? version) : null;
  }
}

async function stillIndexing(em: EntityManager, lib: Library, version: LibraryVersion | null): Promise<UnavailableError> {
  const [job] = (await em.fork().execute(
    `select stage, progress, stage_detail from job where kind = 'index' and completed_at is null
       and detail->>'repositoryId' = ? and coalesce(detail->>'versionId', '') = ? order by created_at desc limit 1`,
    [lib.id, version?.id ?? ''],
  )) as { stage: string | null; progress: number | null; stage_detail: string | null }[];
  const what = version?.id ?? lib.id;
  const where = job ? ` (${[job.stage ?? 'queued', job.stage_detail, job.progress != null ? `${job.progress}% done` : null].filter(Boolean).join(', ')})` : '';
  const retry = job && (job.progress ?? 0) > 0 ? 10 : 20;
  return new UnavailableError(`${what} is being indexed${where}; try again in about ${retry} seconds`, 'INDEXING_IN_PROGRESS', retry);
}

/** A library as an answer describes it: where it comes from, which version of the source, and when it was read. */
export function repositoryOf(lib: LibraryFields, version: VersionFields | null): ContextResult['repository'] {
  return {
    id: lib.id, title: lib.title, source: lib.source, sourceUrl: lib.sourceUrl, branch: lib.branch ?? null,
    indexedVersion: version?.tag ?? lib.latestVersion ?? lib.lastCommit?.slice(0, 12) ?? null,
    indexedAt: (version ? version.indexedAt : lib.lastIndexedAt)?.toISOString() ?? null,
  };
}

/** What an answer reads of its library and version (an entity of each, or a row of the ready path below). */
type LibraryFields = Pick<Library, 'id' | 'title' | 'source' | 'sourceUrl' | 'branch' | 'latestVersion' | 'lastCommit' | 'lastIndexedAt'>;
type VersionFields = Pick<LibraryVersion, 'id' | 'tag' | 'indexedAt'>;
interface Resolved {
  lib: LibraryFields;
  version: VersionFields | null;
  rules: string[];
  /** The active embedding profile, read in the same query on the ready path (search reads it itself otherwise). */
  profile?: ActiveProfileStamp;
}

/**
 * The common case in one query and no entities: the library by its exact id, the version by its exact tag, both
 * indexed, with the scope's rules and the active embedding profile (one round trip fewer per semantic query). Anything else (unknown id or tag, a commit prefix, a scope being indexed, one to
 * register on demand) is undefined, for `referenced` and `untilIndexed`, which say why or wait.
 */
async function readyScope(em: EntityManager, ref: { libraryId: string; version: string | undefined }): Promise<Resolved | undefined> {
  const [row] = (await em.execute(
    // Times as epoch milliseconds (the driver reads timestamps as text); whole ones, as the entities' Dates hold them.
    `select l.id, l.title, l.source, l.source_url, l.branch, l.latest_version, l.last_commit, floor(extract(epoch from l.last_indexed_at) * 1000)::float8 as last_indexed_at, l.state,
       v.id as version_id, v.tag, floor(extract(epoch from v.indexed_at) * 1000)::float8 as indexed_at, v.state as version_state, r.rules,
       p.id as profile_id, p.stamp as profile_stamp
     from library l
     left join library_version v on v.repository_id = l.id and v.tag = ?
     left join library_rules r on r.repository_id = l.id and coalesce(r.version_id, '') = coalesce(v.id, '')
     left join lateral (${ACTIVE_PROFILE_SQL}) p on true
     where l.id = ?`,
    [ref.version ?? null, ref.libraryId],
  )) as {
    id: string; title: string; source: Library['source']; source_url: string; branch: string | null; latest_version: string | null; last_commit: string | null;
    last_indexed_at: number | null; state: string; version_id: string | null; tag: string | null; indexed_at: number | null; version_state: string | null; rules: string[] | null;
    profile_id: string | null; profile_stamp: string | null;
  }[];
  if (!row || (ref.version === undefined ? isIndexing(row.state) : !row.version_id || isIndexing(row.version_state!))) return undefined;
  const date = (ms: number | null) => (ms === null ? null : new Date(Number(ms)));
  return {
    lib: { id: row.id, title: row.title, source: row.source, sourceUrl: row.source_url, branch: row.branch, latestVersion: row.latest_version, lastCommit: row.last_commit, lastIndexedAt: date(row.last_indexed_at) },
    version: row.version_id ? { id: row.version_id, tag: row.tag!, indexedAt: date(row.indexed_at) } : null,
    rules: row.rules ?? [],
    profile: row.profile_id ? { id: row.profile_id, stamp: row.profile_stamp! } : null,
  };
}

/** The library, version and rules an answer needs: the ready path first, else the one that registers, waits or refuses. */
async function resolveScope(deps: RetrievalDeps, em: EntityManager, ref: { libraryId: string; version: string | undefined }, waitMs: number): Promise<Resolved> {
  const ready = await readyScope(em, ref);
  if (ready) return ready;
  const target = await referenced(deps, em, ref);
  const { lib, version } = await untilIndexed(em, target.lib, target.version, waitMs);
  const rulesRow = await em.findOne(LibraryRules, { repositoryId: lib.id, versionId: version?.id ?? null });
  return { lib, version, rules: rulesRow?.rules ?? [] };
}

export async function retrieveContext(deps: RetrievalDeps, p: ContextParams, o: RetrievalOptions = {}): Promise<ContextResult> {
  if (!p.libraryId.trim()) throw new ValidationError('libraryId is required', 'MISSING_PARAMETER');
  if (!p.query.trim()) throw new ValidationError('query is required', 'MISSING_PARAMETER');
  const ref = parseLibraryRef(p.libraryId);
  if (!ref) throw new ValidationError(`libraryId "${p.libraryId}" is not /owner/repo or /owner/repo/version`, 'MISSING_PARAMETER');
  const em = deps.orm.em.fork();
  const t = o.timings;
  const { lib, version, rules, profile } = await timed(t, 'resolve', () => resolveScope(deps, em, ref, o.waitMs ?? 0));
  const scope = { repositoryId: lib.id, versionId: version?.id ?? null };
  const stamp = scopeStampOf(lib, version);
  const found = await search(deps, em, { scope, query: p.query.trim(), mode: p.searchMode, alpha: p.alpha, limit: FETCH_LIMIT, stamp, timings: t, activeProfile: profile });
  // One page, or one text twice, does not crowd out the next page that answers (distinct.ts).
  const kept = keptRows(deps.config, () => stamp);
  const fetched = await timed(t, 'load', async () => distinctResults(await loadSnippets(em, found.ranked, kept)));
  // Read as text (the MCP tool, Context7's txt), results carry their neighbourhood within the budget.
  const snippets =
    p.type === 'txt'
      ? await timed(t, 'widen', () => budgetWithSections(em, fetched, p.tokens, kept))
      : timedSync(t, 'budget', () => applyBudget(fetched, p.tokensGiven ? p.tokens : undefined));
  const versionTags: Record<string, string> = {};
  if (version) versionTags[version.id] = version.tag;
  return {
    snippets,
    resultCount: snippets.length,
    rules,
    searchMode: found.mode,
    reranked: found.reranked,
    repository: repositoryOf(lib, version),
    localSource: lib.source === 'local',
    version: version ? { requested: ref.version!, resolved: version.tag, id: version.id } : null,
    versionTags,
  };
}

/** A snippet as the JSON answers show it (one library's and several libraries'). */
export const snippetJson = (s: ContextSnippet) => ({
  id: s.id,
  type: s.type,
  title: s.title,
  content: s.content,
  language: s.language,
  breadcrumb: s.breadcrumb,
  filePath: s.filePath,
  tokenCount: s.tokenCount,
  versionId: s.versionId,
  score: s.score,
});

/** GET /api/v1/context's JSON body (camelCase only). */
export function contextJson(r: ContextResult) {
  return {
    snippets: r.snippets.map(snippetJson),
    resultCount: r.resultCount,
    rules: r.rules,
    searchMode: r.searchMode,
    reranked: r.reranked,
    repository: r.repository,
    localSource: r.localSource,
    version: r.version,
    versionTags: r.versionTags,
  };
}

/** Which version of the library an answer comes from, and when it was indexed. */
export const indexedLine = (r: Pick<ContextResult, 'repository'>): string =>
  `Indexed: ${r.repository.indexedVersion ? `${r.repository.indexedVersion}, ` : ''}${r.repository.indexedAt?.slice(0, 16).replace('T', ' ')} UTC`;

/** The text's `## Context Results` section; `before` adds lines above a result's `Source:` (its library, across libraries). */
export function contextResultsText<S extends ContextSnippet>(snippets: readonly S[], before: (s: S) => string[] = () => []): string {
  const results: string[] = ['## Context Results'];
  if (!snippets.length) results.push('', 'No matching snippets found');
  for (const [i, s] of snippets.entries()) {
    if (i > 0) results.push('', '-'.repeat(40));
    results.push('', `### ${s.title ?? s.breadcrumb ?? s.filePath}`, '', ...before(s), `Source: ${s.filePath}${s.breadcrumb ? ` (${s.breadcrumb})` : ''}`, '');
    results.push(s.type === 'code' ? ['```' + (s.language ?? ''), s.content, '```'].join('\n') : s.content);
  }
  return results.join('\n');
}

/** GET /api/v1/context's text: rules first, then `## Context Results`, then the repository and the count. */
export function contextText(r: ContextResult): string {
  const parts: string[] = [];
  if (r.rules.length) parts.push(['## Rules', '', ...r.rules.map((rule) => `- ${rule}`)].join('\n'));
  parts.push(contextResultsText(r.snippets));
  const footer = [`Repository: ${r.repository.title} (${r.repository.id})`];
  if (r.version) footer.push(`Version: ${r.version.resolved} (${r.version.id})`);
  footer.push(`Result count: ${r.resultCount}`);
  if (r.repository.indexedAt) footer.push(indexedLine(r));
  parts.push(footer.join('\n'));
  return parts.join('\n\n') + '\n';
}
