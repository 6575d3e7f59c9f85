import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Keyword search over `snippet.search_vector` (PostgreSQL full-text search, the `simple` configuration; see
 * Migration20261124000000_search). The query takes web-search syntax: `"a phrase"`, `-excluded`, `-"excluded phrase"`,
 * and `or` (ignored: terms are alternatives anyway). Each term or phrase matches as written or with its code
 * identifiers split (`useEffect` also as the phrase `use effect`, `snake_case` as `snake case`, `Foo.bar` as
 * `foo bar`), exactly as the indexed text was split.
 *
 * Ranking: a snippet must match at least one term; snippets matching every term come first, then by
 * `ts_rank_cd` (title A > breadcrumb B > content C > split identifiers D, normalised by document length), then by
 * snippet id, so equal scores always come back in the same order. English stop words are dropped from unquoted
 * terms unless nothing else is left, since the `simple` configuration indexes them.
 */

const STOP_WORDS = new Set(
  ('a an and are as at be but by do does did for from how i if in into is it its me my of on or so that the their then there these ' +
    'this to was what when where which who why will with can could should would you your we our use using').split(' '),
);

export interface ParsedQuery {
  include: string[];
  exclude: string[];
}

/** Splits code identifiers the same way `gristmill_code_words` does in SQL. */
export function splitIdentifiers(text: string): string {
  return text
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
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

export async function keywordSearch(em: EntityManager, scope: Scope, query: string, limit: number): Promise<Ranked[]> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return [];
  const params: unknown[] = [];
  const any = parsed.include.map((t) => termSql(t, params)).join(' || ');
  const all = parsed.include.map((t) => termSql(t, params)).join(' && ');
  const not = parsed.exclude.map((t) => termSql(t, params));
  const loose = not.length ? `(${any}) && !!(${not.join(' || ')})` : `(${any})`;
  const strict = not.length ? `(${all}) && !!(${not.join(' || ')})` : `(${all})`;
  const scopeParams: unknown[] = [scope.repositoryId];
  let versionSql = 's.version_id is null';
  if (scope.versionId !== null) {
    versionSql = 's.version_id = ?';
    scopeParams.push(scope.versionId);
  }
  // Snippets matching every term come first (score + 1). Ranking is the cost, so the all-terms set is ranked on
  // its own and the any-term set only when the first does not fill the page: far fewer rows reach ts_rank_cd.
  const ranked = (match: string, bonus: number, exclude: string, n: number) =>
    em.execute(
      `with q as (select ${loose} as loose, ${strict} as strict)
       select s.id, (ts_rank_cd(s.search_vector, q.loose, 1) + ${bonus})::float8 as score
       from snippet s, q
       where s.repository_id = ? and ${versionSql} and ${match} ${exclude}
       order by score desc, s.id asc
       limit ?`,
      [...params, ...scopeParams, n],
    ) as Promise<{ id: string; score: number }[]>;
  const rows = await ranked('s.search_vector @@ q.strict', 1, '', limit);
  if (rows.length < limit) rows.push(...(await ranked('s.search_vector @@ q.loose', 0, 'and not (s.search_vector @@ q.strict)', limit - rows.length)));
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}
