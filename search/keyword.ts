import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Keyword search over `snippet.search_vector` (PostgreSQL full-text search; see Migration20261127000000_search_stems):
 * per field, the identifier-preserving `simple` lexemes and the `english` stems beside them. The query takes
 * web-search syntax: `"a phrase"`, `-excluded`, `-"excluded phrase"`, and `or` (ignored: terms are alternatives
 * anyway). Each term or phrase matches as written, by its English stems (`connections` finds `connection`), or with
 * its code identifiers split (`useEffect` also as the phrase `use effect`, `snake_case` as `snake case`, `Foo.bar` as
 * `foo bar`), exactly as the indexed text was split. English stop words are dropped from unquoted terms unless
 * nothing else is left, since the `simple` configuration indexes them. Ranking: see keywordSearch.
 */

const STOP_WORDS = new Set(
  ('a an and are as at be but by do does did for from how i if in into is it its me my of on or so that the their then there these ' +
    'this to was what when where which who why will with can could should would you your we our use using').split(' '),
);

/** Each term is ranked on its own (see keywordSearch): a query uses at most this many distinct terms, and exclusions. */
export const MAX_TERMS = 24;

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
  const distinct = (list: string[]) => [...new Map(list.map((t) => [t.toLowerCase(), t])).values()].slice(0, MAX_TERMS);
  return { include: distinct(include), exclude: distinct(exclude) };
}

/**
 * One term as a tsquery: the text as written, its English stems, and the phrase of its split identifiers, any of
 * which may match (`phraseto_tsquery` of a stop word is empty, and `||` with an empty query is the other side).
 */
function termSql(term: string, params: unknown[]): string {
  const split = splitIdentifiers(term);
  params.push(term, term);
  const forms = [`phraseto_tsquery('simple', ?)`, `phraseto_tsquery('english', ?)`];
  if (split.trim().toLowerCase() !== term.trim().toLowerCase() && hasWord(split)) {
    params.push(split);
    forms.push(`phraseto_tsquery('simple', ?)`);
  }
  return `(${forms.join(' || ')})`;
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
  /** The most matches read for a query (SEARCH_RANK_CANDIDATES), split between its terms: bounds common words. */
  candidates: number;
}

/**
 * Field weights for ts_rank, `{D, C, B, A}`: a title occurrence counts three content occurrences, a breadcrumb two,
 * a split identifier half of one. BM25's saturation (below) then keeps a title match from outweighing rarer terms.
 */
const WEIGHTS = '{0.15, 0.3333, 0.6667, 1.0}';
/** ts_rank of one occurrence of weight w is w / 1.645 (the sum of 1/i^2); this makes one content occurrence 1. */
const UNIT = 1.64493406685 / 0.3333;
/** BM25's term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;
/** A snippet's usual number of distinct lexemes (stems and split identifiers included), the length norm's 1. */
const AVERAGE_LEXEMES = 64;

/**
 * BM25-style ranking in PostgreSQL. For each query term t (its forms as in termSql): df(t), the snippets of the
 * scope that match it, counted among at most its share of `candidates` (`candidates` divided by the number of
 * terms); a term that fills its share is common, and its df is taken as at least half the scope. Then
 *
 *   score(d) = sum over t of idf(t) * tf(t, d) * (K1 + 1) / (tf(t, d) + K1 * (1 - B + B * len(d) / AVERAGE_LEXEMES))
 *   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)),  N = the snippets of the scope
 *
 * where tf(t, d) is ts_rank of t in d with the field weights above (so a rare word in a body outweighs a common word
 * in a title) and len(d) the snippet's distinct lexemes. Candidates are each term's matches (at most `candidates`
 * divided by the number of terms, in table order) and, with several terms of which one filled its share, the
 * snippets matching all of them (at most `candidates`), so a rare term's matches are always all ranked and a common
 * word costs a bounded read. Ties: snippet id.
 */
export async function keywordSearch(em: EntityManager, scope: Scope, query: string, limit: number, options: KeywordOptions): Promise<Ranked[]> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return [];
  // Placeholders bind in order of appearance, so each expression pushes its own parameters as it is written.
  const params: unknown[] = [];
  const terms = parsed.include.map((t) => termSql(t, params));
  const exclude = parsed.exclude.map((t) => termSql(t, params)).join(' || ');
  const n = terms.length;
  const scopeSql = scope.versionId === null ? 's.repository_id = ? and s.version_id is null' : 's.repository_id = ? and s.version_id = ?';
  const scopeParams = scope.versionId === null ? [scope.repositoryId] : [scope.repositoryId, scope.versionId];
  const totalSql = scope.versionId === null ? 'select total_snippets from library where id = ?' : 'select total_snippets from library_version where id = ?';
  const cap = Math.max(1, Math.ceil(options.candidates / n));
  const excluded = exclude ? ' and not s.search_vector @@ q.x' : '';
  // ts_rank scores the words of a phrase one by one: a snippet that does not match the term gets nothing for it.
  const tfs = terms.map((_, i) => `case when s.search_vector @@ q.t${i} then ts_rank('${WEIGHTS}', s.search_vector, q.t${i}, 0) * ${UNIT} else 0 end as f${i}`);
  // A candidate carries its length and term frequencies, not its vector: the sets stay small enough to stay in memory.
  const set = (match: string) =>
    `select s.id, length(s.search_vector) as len, ${tfs.join(', ')} from snippet s, q where ${scopeSql} and s.search_vector @@ ${match}${excluded} limit ?`;
  const sets = terms.map((_, i) => ({ sql: set(`q.t${i}`), params: [...scopeParams, cap] }));
  // The snippets matching every term, read only when some term's share was not all its matches (a term read whole
  // already brought every snippet that has it).
  const truncated = terms.map((_, i) => `(select count(*) from c${i}) >= ${cap}`).join(' or ');
  if (n > 1) sets.push({ sql: set(`(${terms.map((_, i) => `q.t${i}`).join(' && ')}) and (${truncated})`), params: [...scopeParams, options.candidates] });
  const norm = `(1 - ${B} + ${B} * u.len / ${AVERAGE_LEXEMES}.0)`;
  // Each term's idf, once per query. A term whose read reached its share is common: its df is then at least half
  // the scope (it was not counted further).
  const idfs = terms.map((_, i) => {
    const df = `(case when d.d${i} >= ${cap} then greatest(d.d${i}, t.n / 2) else d.d${i} end)`;
    return `ln(1 + (greatest(t.n - ${df}, 0) + 0.5) / (${df} + 0.5)) as w${i}`;
  });
  const score = terms.map((_, i) => `w.w${i} * u.f${i} * ${K1 + 1} / (u.f${i} + ${K1} * ${norm})`).join(' + ');
  // The GIN index finds a word's matches (or every word's) without reading the rows that lack them. With a LIMIT
  // the planner prefers a sequential scan, which for words that rarely occur together reads most of the table.
  const sql = `with q as not materialized (select ${terms.map((t, i) => `${t} as t${i}`).join(', ')}${exclude ? `, ${exclude} as x` : ''}),
     ${sets.map((s, i) => `c${i} as (${s.sql})`).join(',\n     ')},
     d as (select ${terms.map((_, i) => `(select count(*) from c${i})::float8 as d${i}`).join(', ')}),
     t as (select greatest(coalesce((${totalSql}), 0), ${terms.map((_, i) => `d.d${i}`).join(', ')}, 1)::float8 as n from d),
     w as materialized (select ${idfs.join(', ')} from d, t),
     u as (select distinct on (id) * from (${sets.map((_, i) => `select * from c${i}`).join(' union all ')}) a order by id)
     select u.id, (${score})::float8 as score from u, w order by score desc, u.id asc limit ?`;
  // The GIN index finds a word's matches (or every word's) without reading the rows that lack them. With a LIMIT
  // the planner prefers a sequential scan, which for words that rarely occur together reads most of the table.
  const rows = (await em.transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    return tx.execute(sql, [...params, ...sets.flatMap((s) => s.params), scope.versionId ?? scope.repositoryId, limit]);
  })) as { id: string; score: number }[];
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}
