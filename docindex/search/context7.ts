import { AppError } from '../../core/errors.js';
import { Library, LibraryVersion } from '../entities/library.js';
import type { HttpError } from '../../api/errors.js';
import type { ContextResult, ContextSnippet, RetrievalDeps } from './context.js';
import { ALL_LIBRARIES, MAX_LIBRARY_LIST, splitLibraryList } from '../ids.js';
import { isPackageSource } from '../sources/types.js';

/**
 * Context7-compatible shapes (docs/documentation-index.md, "Search and context"): library search, the v2 context body and text,
 * and `{error, message}` errors with Context7's codes.
 */

/** A Context7 error: its status and code as Context7 answers them (202 library_not_finalized is one). */
export class Context7Error extends AppError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
  ) {
    super(message, code);
  }
}

const CODE_MAP: Record<string, { status: number; code: string }> = {
  MISSING_PARAMETER: { status: 400, code: 'validation_error' },
  VALIDATION_ERROR: { status: 400, code: 'validation_error' },
  INVALID_LIBRARY_ID: { status: 400, code: 'invalid_library_id' },
  UNAUTHORIZED: { status: 401, code: 'invalid_api_key' },
  LIBRARY_NOT_FOUND: { status: 404, code: 'library_not_found' },
  VERSION_NOT_FOUND: { status: 404, code: 'tag_not_found' },
  ROUTE_NOT_FOUND: { status: 404, code: 'not_found' },
  INDEXING_IN_PROGRESS: { status: 202, code: 'library_not_finalized' },
};

/** Our errors in Context7's terms (thrown again by the v2 handlers, so the status is Context7's too). */
export function toContext7Error(err: unknown): unknown {
  if (err instanceof Context7Error || !(err instanceof AppError)) return err;
  const m = CODE_MAP[err.code];
  return m ? new Context7Error(m.status, m.code, err.message) : err;
}

/** The error body of /api/v2: `{error: <Context7 code>, message}`. */
export function context7ErrorBody(e: HttpError): unknown {
  const code = /^[a-z_]+$/.test(e.code) ? e.code : (CODE_MAP[e.code]?.code ?? (e.status >= 500 ? 'search_failed' : e.code.toLowerCase()));
  return { error: code, message: e.message };
}

const STATE_MAP: Record<string, string> = { indexed: 'finalized', pending: 'initial', indexing: 'processing', error: 'error' };
/** A state as an assistant relays it. */
const STATE_WORDS: Record<string, string> = {
  initial: 'being indexed now (registered on this search); query-docs waits for it',
  processing: 'being indexed now; query-docs waits for it',
  error: 'indexing failed; its documentation is not available',
};

/** The score of a library whose name or title is the name searched for, or starts with it (libraryScore). */
const NAME_MATCH = 60;

/** How well a library matches the name and query: name (repo) over title over description; 0 is no match. */
export function libraryScore(lib: { id: string; title: string; description: string | null | undefined }, name: string, query: string): number {
  const n = name.trim().toLowerCase().replace(/^\//, '');
  const repo = lib.id.split('/').pop()!.toLowerCase();
  const id = lib.id.toLowerCase().replace(/^\//, '');
  const title = lib.title.toLowerCase();
  const description = (lib.description ?? '').toLowerCase();
  let score = 0;
  if (n) {
    if (repo === n || id === n || title === n) score += 100;
    else if (repo.startsWith(n) || title.startsWith(n)) score += 60;
    else if (id.includes(n) || title.includes(n)) score += 40;
    else if (description.includes(n)) score += 15;
    const words = n.split(/[^a-z0-9]+/).filter((w) => w.length > 1);
    for (const w of words) if (repo.includes(w) || title.includes(w)) score += 5;
  }
  const q = query.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2);
  if (score > 0) for (const w of q) if (description.includes(w) || title.includes(w)) score += 1;
  return score;
}

/** Context7's library search: libraries whose name, title or description match, best first. */
export async function searchLibraries(deps: RetrievalDeps, name: string, question: string) {
  // The REST schemas refuse more; MCP clients get the start of what they sent.
  const libraryName = name.slice(0, 500);
  const query = question.slice(0, 500);
  const em = deps.orm.em.fork();
  const libs = await em.find(Library, {}, { orderBy: { id: 'asc' } });
  const term = libraryName.trim() || query.trim();
  const scored = libs
    .map((lib) => ({ lib, score: libraryScore(lib, term, libraryName.trim() ? query : '') }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || Number(b.lib.trustScore) - Number(a.lib.trustScore) || b.lib.totalSnippets - a.lib.totalSnippets || (a.lib.id < b.lib.id ? -1 : 1))
    .slice(0, 20);
  // Nothing indexed matches the name itself (its whole or its start; a shared word is not a match): a registry may
  // have it (docindex/on-demand.ts). It comes first, answered as being indexed, before the weaker matches.
  if (libraryName.trim() && deps.onDemand && !scored.some((x) => x.score >= NAME_MATCH)) {
    const registered = await deps.onDemand.search(libraryName, query);
    if (registered && !scored.some((x) => x.lib.id === registered.id)) scored.unshift({ lib: registered, score: NAME_MATCH });
  }
  const ids = scored.map((x) => x.lib.id);
  const versions = ids.length ? await em.find(LibraryVersion, { repositoryId: { $in: ids } }, { orderBy: { createdAt: 'asc' } }) : [];
  const tokens: { repository_id: string; n: string }[] = ids.length
    ? await em.execute(`select repository_id, sum(token_count) as n from snippet where repository_id = any(array(select json_array_elements_text(?::json))) and version_id is null group by repository_id`, [JSON.stringify(ids)])
    : [];
  return {
    results: scored.map(({ lib }) => ({
      id: lib.id,
      title: lib.title,
      description: lib.description ?? '',
      branch: lib.branch ?? 'main',
      lastUpdateDate: (lib.lastIndexedAt ?? lib.updatedAt).toISOString(),
      /** The version the default scope holds (a package's latest when it was indexed). */
      indexedVersion: lib.latestVersion ?? null,
      source: lib.source,
      state: STATE_MAP[lib.state] ?? lib.state,
      totalTokens: Number(tokens.find((t) => t.repository_id === lib.id)?.n ?? 0),
      totalSnippets: lib.totalSnippets,
      stars: -1,
      trustScore: Number(lib.trustScore),
      benchmarkScore: 0,
      versions: versions.filter((v) => v.repositoryId === lib.id).map((v) => v.tag),
    })),
    searchFilterApplied: term.length > 0,
  };
}

export type LibrarySearchResult = Awaited<ReturnType<typeof searchLibraries>>['results'][number];

/** `/owner/repo@v` and `/owner/repo/v` (Context7's pattern); anything else is 400 invalid_library_id. */
export function context7LibraryId(raw: string): string {
  // A scoped npm package is the one id with an `@` inside: /npm/@scope/name.
  const m = /^\/(npm)\/(@[^/@\s]+\/[^/@\s]+)(?:[/@]([^/\s]+))?$/.exec(raw.trim()) ?? /^\/([^/@\s]+)\/([^/@\s]+)(?:[/@]([^/\s]+))?$/.exec(raw.trim());
  if (!m) throw new Context7Error(400, 'invalid_library_id', `libraryId "${raw}" must look like /owner/repo, /owner/repo/version or /owner/repo@version`);
  return `/${m[1]}/${m[2]}${m[3] ? `/${m[3]}` : ''}`;
}

/** A snippet's library, named in the answers for several libraries. */
type Labelled = { libraryId?: string; versionTag?: string | null };
/** Where a snippet comes from: its library, and the version asked for. */
type Origin = Pick<ContextResult, 'repository' | 'localSource' | 'version'>;

/** What the Context7 shapes read of an answer from several libraries (docindex/search/multi-library.ts). */
interface MultiAnswer {
  snippets: MultiSnippet[];
  libraries: (Origin & { rules: string[] })[];
  skipped: unknown[];
}
type MultiSnippet = ContextSnippet & { libraryId: string; versionTag: string | null };

/** The library a snippet of several libraries' answer comes from. */
const originOf = (r: MultiAnswer, s: MultiSnippet): Origin =>
  r.libraries.find((l) => l.repository.id === s.libraryId && (l.version?.id ?? null) === s.versionId) ?? r.libraries[0]!;

function sourceUrl(r: Origin, filePath: string): string {
  // A site's page is its URL (docindex/sources/website/pages.ts writes each page at its URL's path, `.md` added).
  if (r.repository.source === 'website') return new URL(filePath.replace(/\.md$/, '').replace(/(^|\/)index$/, '$1'), new URL(r.repository.sourceUrl).origin + '/').href;
  // A package's file, named by the registry and the version it came from.
  if (isPackageSource(r.repository.source)) {
    return `${r.repository.source}:${r.repository.sourceUrl}@${r.version?.resolved ?? r.repository.indexedVersion ?? 'latest'}/${filePath}`;
  }
  const base = r.repository.sourceUrl.replace(/\.git$/, '').replace(/\/$/, '');
  if (r.localSource) return `${base}/${filePath}`;
  const ref = r.version?.resolved ?? r.repository.branch ?? 'main';
  return /github\.com|gitlab\.com/.test(base) ? `${base}/blob/${ref}/${filePath}` : `${base}/${filePath}`;
}

/** The v2 JSON body: codeSnippets and infoSnippets, then rules. */
export function context7Json(r: ContextResult) {
  return context7Body(r.snippets, r.rules, () => r);
}

/**
 * The v2 JSON body for several libraries (docindex/search/multi-library.ts): each snippet names its library
 * (`libraryId`, and `versionTag` for a version), the rules are every searched library's, and `skipped` lists the
 * libraries that were not searched.
 */
export function context7MultiJson(r: MultiAnswer) {
  const label = (s: MultiSnippet) => ({ libraryId: s.libraryId, versionTag: s.versionTag });
  return { ...context7Body(r.snippets, r.libraries.flatMap((l) => l.rules), (s) => originOf(r, s), label), skipped: r.skipped };
}

function context7Body<S extends ContextSnippet>(snippets: S[], rules: string[], origin: (s: S) => Origin, label: (s: S) => Labelled = () => ({})) {
  return {
    codeSnippets: snippets
      .filter((s) => s.type === 'code')
      .map((s) => ({
        codeTitle: s.title ?? s.breadcrumb ?? s.filePath,
        codeDescription: s.breadcrumb ?? '',
        codeLanguage: s.language ?? '',
        codeTokens: s.tokenCount,
        codeId: `${sourceUrl(origin(s), s.filePath)}#_snippet_${s.ordinal}`,
        pageTitle: s.breadcrumb?.split(' > ')[0] ?? s.filePath,
        codeList: [{ language: s.language ?? '', code: s.content }],
        ...label(s),
      })),
    infoSnippets: snippets
      .filter((s) => s.type === 'info')
      .map((s) => ({ pageId: sourceUrl(origin(s), s.filePath), breadcrumb: s.breadcrumb ?? s.title ?? '', content: s.content, contentTokens: s.tokenCount, ...label(s) })),
    rules: { global: [] as string[], libraryOwn: rules, libraryTeam: [] as string[] },
  };
}

const SEPARATOR = '\n\n' + '-'.repeat(32) + '\n\n';

/** Context7's txt layout: code blocks, then info blocks, each separated by a line of 32 dashes. */
export function context7Text(r: ContextResult): string {
  return context7Layout(context7Json(r));
}

/** The txt layout for several libraries: each block says its library on the line after its source. */
export function context7MultiText(r: MultiAnswer): string {
  return context7Layout(context7MultiJson(r));
}

type Body = ReturnType<typeof context7Body>;
const libraryLine = (l: Labelled) => (l.libraryId ? [`Library: ${l.libraryId}${l.versionTag ? ` (${l.versionTag})` : ''}`] : []);

function context7Layout(j: Body): string {
  const code = j.codeSnippets.map((c) =>
    [`### ${c.codeTitle}`, '', `Source: ${c.codeId}`, ...libraryLine(c), '', c.codeDescription, '', '```' + c.codeLanguage, c.codeList[0]!.code, '```'].join('\n'),
  );
  const info = j.infoSnippets.map((i) => [`### ${i.breadcrumb}`, '', `Source: ${i.pageId}`, ...libraryLine(i), '', i.content].join('\n'));
  const sections = [code.join(SEPARATOR), info.join(SEPARATOR)].filter(Boolean);
  const own = j.rules.libraryOwn;
  const rules = own.length ? ['### Rules', '', ...own.map((x) => `- ${x}`)].join('\n') + '\n\n' : '';
  return rules + sections.join(SEPARATOR) + '\n';
}

const reputation = (trust: number) => (trust >= 7 ? 'High' : trust >= 4 ? 'Medium' : trust > 0 ? 'Low' : 'Unknown');

/** The MCP `resolve-library-id` answer, in Context7's layout. */
export function resolveLibraryText(results: LibrarySearchResult[]): string {
  if (!results.length) return 'No libraries found matching the provided name.';
  const blocks = results.map((r) =>
    [
      `- Title: ${r.title}`,
      `- Context7-compatible library ID: ${r.id}`,
      `- Description: ${r.description}`,
      `- Code Snippets: ${r.totalSnippets}`,
      `- Source Reputation: ${reputation(r.trustScore)}`,
      ...(r.benchmarkScore > 0 ? [`- Benchmark Score: ${r.benchmarkScore}`] : []),
      ...(r.versions.length ? [`- Versions: ${r.versions.join(', ')}`] : []),
      ...(r.state !== 'finalized' ? [`- State: ${STATE_WORDS[r.state] ?? r.state}`] : []),
    ].join('\n'),
  );
  return `Available Libraries:\n\n${blocks.join('\n' + '-'.repeat(10) + '\n')}`;
}

/**
 * A list in Context7's forms (`/a/b@v`) as ours (`/a/b/v`); `*` as it is. The list is bounded before each entry is
 * read (docindex/search/multi-library.ts answers 400 TOO_MANY_LIBRARIES).
 */
export function context7LibraryList(list: string): string {
  const items = splitLibraryList(list);
  if (items.length > MAX_LIBRARY_LIST || (items.length === 1 && items[0] === ALL_LIBRARIES)) return list;
  return items.map(context7LibraryId).join(',');
}
