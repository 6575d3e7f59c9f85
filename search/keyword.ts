import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../db/sql.js';

/**
 * Keyword search over `snippet.search_vector` (PostgreSQL full-text search, the `simple` configuration; see
 * Migration20261124000000_search). The query takes web-search syntax: `"a phrase"`, `-excluded`, `-"excluded phrase"`,
 * and `or` (ignored: terms are alternatives anyway). Each term or phrase matches as written or with its code
 * identifiers split (`useEffect` also as the phrase `use effect`, `snake_case` as `snake case`, `Foo.bar` as
 * `foo bar`), exactly as the indexed text was split.
 *
 * Ranking (see keywordSearch): a snippet must match at least one term; title or breadcrumb matches of every term come
 * first, then other snippets matching every term, then the rest, each by `ts_rank` and snippet id, so equal scores
 * always come back in the same order. English stop words are dropped from unquoted terms unless nothing else is
 * left, since the `simple` configuration indexes them.
 */

const STOP_WORDS = new Set(
  ('a an and are as at be but by do does did for from how i if in into is it its me my of on or so that the their then there these ' +
    'this to was what when where which who why will with can could should would you your we our use using').split(' '),
);

export interface ParsedQuery {
  include: string[];
  exclude: string[];
}

/**
 * Splits code identifiers the same way `gristmill_code_words` does in SQL. The acronym rule (`HTTPServer` -> `HTTP
 * Server`) looks ahead one capital and one lower-case letter from each capital, so it is linear: a greedy run of
 * capitals backtracked over every position (quadratic: seconds for a long run of capitals in a query).
 */
export function splitIdentifiers(text: string): string {
  return text
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.:/\-#$]/g, ' ');
}

const hasWord = (s: string) => /[\p{L}\p{N}]/u.test(s);

export function parseQuery(query: string): ParsedQuery {
  const include: string[] = [];
  const exclude: string[] = [];
  const plain: string[] = [];
  const re = /(-?)"([^"]*)"?|(\S+)/g;
  for (const m of query.matchAll(re)) {
    if (m[2] !== undefined) {
      if (!hasWord(m[2])) continue;
      (m[1] ? exclude : include).push(m[2]);
      continue;
    }
    const word = m[3]!;
    if (word.toLowerCase() === 'or') continue;
    if (word.startsWith('-') && word.length > 1) {
      if (hasWord(word.slice(1))) exclude.push(word.slice(1));
      continue;
    }
    if (hasWord(word)) plain.push(word);
  }
  const meaningful = plain.filter((w) => !STOP_WORDS.has(w.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '')));
  include.push(...(meaningful.length || include.length ? meaningful : plain));
  return { include, exclude };
}

/** One term as SQL: the text as written, or with identifiers split (a phrase). */
function termSql(term: string, params: unknown[]): string {
  const split = splitIdentifiers(term);
  params.push(term);
  if (split.trim().toLowerCase() === term.trim().toLowerCase() || !hasWord(split)) return `phraseto_tsquery('simple', ?)`;
  params.push(split);
  return `(phraseto_tsquery('simple', ?) || phraseto_tsquery('simple', ?))`;
}

export interface Scope {
  repositoryId: string;
  /** null: the default branch. */
  versionId: string | null;
}

export interface Ranked {
  id: string;
  score: number;
}

export interface KeywordOptions {
  /** The most matches ranked per tier (SEARCH_RANK_CANDIDATES): bounds the cost of very common words. */
  candidates: number;
}

/**
 * Tiers, best first: (1) the title or breadcrumb matches every term, (2) the snippet matches every term, (3) it matches
 * at least one. Within a tier, `ts_rank` (weights A > B > C > D, normalised by document length), then snippet id.
 * A tier is only read while the page is not full, so the usual query ranks a few hundred rows, not every match.
 * A tier ranks at most `candidates` matches, taken in table order; only words common to tens of thousands of
 * snippets reach that bound.
 */
export async function keywordSearch(em: EntityManager, scope: Scope, query: string, limit: number, options: KeywordOptions): Promise<Ranked[]> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return [];
  // Placeholders bind in order of appearance, so each expression pushes its own parameters as it is written.
  const params: unknown[] = [];
  const terms = (list: string[], joiner: string) => list.map((t) => termSql(t, params)).join(joiner);
  const withExclusions = (sql: string) => (parsed.exclude.length ? `(${sql}) && !!(${terms(parsed.exclude, ' || ')})` : `(${sql})`);
  const loose = withExclusions(terms(parsed.include, ' || '));
  const strict = withExclusions(terms(parsed.include, ' && '));
  const scopeParams: unknown[] = [scope.repositoryId];
  let versionSql = 's.version_id is null';
  if (scope.versionId !== null) {
    versionSql = 's.version_id = ?';
    scopeParams.push(scope.versionId);
  }
  // `not materialized`: the planner then sees the queries as constants, so it can weigh the two GIN indexes (a
  // materialised CTE hid them, and a common word's tier ran the heading function on every content match).
  // A score is its tier plus rank / (1 + rank), below 1 whatever ts_rank answers, so scores fall across tiers too.
  const tier = (match: string, bonus: number, n: number, extra: unknown[] = []) =>
    em.execute(
      `with q as not materialized (select ${loose} as loose, ${strict} as strict)
       select r.id, (${bonus} + r.rank / (1 + r.rank))::float8 as score
       from (select c.id, ts_rank(c.search_vector, q.loose, 1) as rank
             from (select s.id, s.search_vector from snippet s, q
                   where s.repository_id = ? and ${versionSql} and ${match} limit ?) c, q) r
       order by score desc, r.id asc
       limit ?`,
      [...params, ...scopeParams, ...extra, options.candidates, n],
    ) as Promise<{ id: string; score: number }[]>;
  const rows = await tier(`snippet_heading_vector(s.title, s.breadcrumb) @@ q.strict and s.search_vector @@ q.strict`, 2, limit);
  // A tier that did not fill the page was read whole, so the next one only has to leave its rows out.
  if (rows.length < limit) {
    rows.push(...(await tier(`s.search_vector @@ q.strict and s.id <> all(${TEXT_ARRAY})`, 1, limit - rows.length, [textArray(rows.map((r) => r.id))])));
  }
  if (rows.length < limit) rows.push(...(await tier('s.search_vector @@ q.loose and not (s.search_vector @@ q.strict)', 0, limit - rows.length)));
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}
