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

/** The ways one term can match: as written, by its English stems, and as the phrase of its split identifiers. */
function termForms(term: string): { config: 'simple' | 'english'; text: string }[] {
  const forms: { config: 'simple' | 'english'; text: string }[] = [
    { config: 'simple', text: term },
    { config: 'english', text: term },
  ];
  const split = splitIdentifiers(term);
  if (split.trim().toLowerCase() !== term.trim().toLowerCase() && hasWord(split)) forms.push({ config: 'simple', text: split });
  return forms;
}

/**
 * One term as a tsquery: any of its forms may match (`phraseto_tsquery` of a stop word is empty, and `||` with an
 * empty query is the other side).
 */
function termSql(term: string, params: unknown[]): string {
  const forms = termForms(term);
  params.push(...forms.map((f) => f.text));
  return `(${forms.map((f) => `phraseto_tsquery('${f.config}', ?)`).join(' || ')})`;
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
 * A lexeme held by fewer snippets of a scope than this has no `search_term` row: such a word is rare, read and
 * counted at query time. (With SEARCH_RANK_CANDIDATES far below its default, a term's share can be smaller than this;
 * a word between the two is then read to its share and taken as common, as for a scope without statistics.)
 */
export const MIN_TERM_SNIPPETS = 20;

const scopeWhere = (scope: Scope, alias = 's') =>
  scope.versionId === null ? `${alias}.repository_id = ? and ${alias}.version_id is null` : `${alias}.repository_id = ? and ${alias}.version_id = ?`;
const scopeValues = (scope: Scope) => (scope.versionId === null ? [scope.repositoryId] : [scope.repositoryId, scope.versionId]);

/**
 * Rewrites a scope's term statistics from its snippets (idempotent: the scope's rows are replaced in one
 * transaction). An indexing run calls it in the transaction that swaps its snippets in.
 */
export async function refreshTermStatistics(em: EntityManager, scope: Scope): Promise<void> {
  await em.transactional(async (tx) => {
    await tx.execute(`delete from search_term s where ${scopeWhere(scope)}`, scopeValues(scope));
    // ts_stat runs a query given as text: the scope goes in as quoted literals (format's %L), never as SQL.
    const inner =
      scope.versionId === null
        ? `format('select search_vector from snippet where repository_id = %L and version_id is null', ?::text)`
        : `format('select search_vector from snippet where repository_id = %L and version_id = %L', ?::text, ?::text)`;
    await tx.execute(
      `insert into search_term (repository_id, version_id, lexeme, snippets)
       select ?, ?, word, ndoc from ts_stat(${inner}) where ndoc >= ${MIN_TERM_SNIPPETS}`,
      [scope.repositoryId, scope.versionId, ...scopeValues(scope)],
    );
  });
}

/**
 * Each term's document frequency from the scope's statistics: a term (any of its forms) matches about as many
 * snippets as its commonest one-word form, since a snippet holding a word also holds its stem. A phrase (a quoted
 * one, or a split identifier such as `get server side props`) counts 0: its words' frequencies only bound it, and a
 * rare phrase of common words taken as common would be looked for row by row through the whole scope. 0 too: under
 * MIN_TERM_SNIPPETS, or no statistics (an index built before they existed, or snippets written by hand).
 */
async function termFrequencies(em: EntityManager, scope: Scope, terms: string[]): Promise<number[]> {
  const forms = terms.flatMap((term, i) => termForms(term).map((f, k) => ({ i, k, config: f.config, text: f.text })));
  const rows = (await em.execute(
    `select f.i, f.k, case when count(*) = 1 then min(coalesce(t.snippets, 0)) else 0 end::int as df
     from json_to_recordset(?::json) as f(i int, k int, config text, text text)
     cross join lateral unnest(tsvector_to_array(to_tsvector(f.config::regconfig, f.text))) as l(lexeme)
     left join search_term t on ${scopeWhere(scope, 't')} and t.lexeme = l.lexeme
     group by f.i, f.k`,
    [JSON.stringify(forms), ...scopeValues(scope)],
  )) as { i: number; df: number }[];
  const df = terms.map(() => 0);
  for (const r of rows) df[r.i] = Math.max(df[r.i]!, Number(r.df));
  return df;
}

/**
 * BM25-style ranking in PostgreSQL. For each query term t (its forms as in termSql), with N the snippets of the scope:
 *
 *   score(d) = sum over t of idf(t) * tf(t, d) * (K1 + 1) / (tf(t, d) + K1 * (1 - B + B * len(d) / AVERAGE_LEXEMES))
 *   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
 *
 * where tf(t, d) is ts_rank of t in d with the field weights above (so a rare word in a body outweighs a common word
 * in a title) and len(d) the snippet's distinct lexemes. Ties: snippet id.
 *
 * Candidates: each term has a share of `candidates` (divided by the number of terms). A term that the scope's
 * statistics (`search_term`) show held by at least its share of snippets is common: the common terms' matches are
 * read together, up to their shares, in table order through the scope's index, and their df is the statistics'. The
 * GIN index is not asked for them: it would first gather every match, tens of thousands in a large library. Every
 * other term is rare: its matches are all read through the GIN index (which finds them without reading the rows
 * that lack them) and counted for its df; without statistics, a rare term that fills its share counts as held by at
 * least half the scope. A snippet holding every term holds the rare ones, so it is always read. When every term is
 * common, the candidates are a sample in table order, as any bounded read of words most snippets hold must be.
 */
export async function keywordSearch(em: EntityManager, scope: Scope, query: string, limit: number, options: KeywordOptions): Promise<Ranked[]> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return [];
  const n = parsed.include.length;
  const cap = Math.max(1, Math.ceil(options.candidates / n));
  const stats = await termFrequencies(em, scope, parsed.include);
  const common = stats.map((df) => df >= cap);
  // Placeholders bind in order of appearance, so each expression pushes its own parameters as it is written.
  const params: unknown[] = [];
  const terms = parsed.include.map((t) => termSql(t, params));
  const exclude = parsed.exclude.map((t) => termSql(t, params)).join(' || ');
  const scopeSql = scopeWhere(scope);
  const scopeParams = scopeValues(scope);
  const totalSql = scope.versionId === null ? 'select total_snippets from library where id = ?' : 'select total_snippets from library_version where id = ?';
  const excluded = exclude ? ' and not s.search_vector @@ q.x' : '';
  // ts_rank scores the words of a phrase one by one: a snippet that does not match the term gets nothing for it.
  const tfs = terms.map((_, i) => `case when s.search_vector @@ q.t${i} then ts_rank('${WEIGHTS}', s.search_vector, q.t${i}, 0) * ${UNIT} else 0 end as f${i}`);
  // A candidate carries its length and term frequencies, not its vector: the sets stay small enough to stay in memory.
  const set = (match: string) => `select s.id, length(s.search_vector)::float8 as len, ${tfs.join(', ')} from snippet s, q where ${scopeSql} and ${match}${excluded} limit ?`;
  const rare = terms.flatMap((_, i) => (common[i] ? [] : [i]));
  const commons = terms.flatMap((_, i) => (common[i] ? [i] : []));
  const sets: { name: string; sql: string; params: unknown[] }[] = rare.map((i) => ({ name: `c${i}`, sql: set(`s.search_vector @@ q.t${i}`), params: [...scopeParams, cap] }));
  if (commons.length) {
    // `is true` keeps the planner off the GIN index: the scope's index, read in order, finds a common word at once.
    const any = commons.map((i) => `q.t${i}`).join(' || ');
    sets.push({ name: 'cc', sql: set(`(s.search_vector @@ (${any})) is true`), params: [...scopeParams, cap * commons.length] });
  }
  const norm = `(1 - ${B} + ${B} * u.len / ${AVERAGE_LEXEMES})`;
  // Each term's idf, once per query.
  const dfs = terms.map((_, i) => {
    if (common[i]) return `${stats[i]}::float8`;
    const read = `(select count(*) from c${i})::float8`;
    return `(case when ${read} >= ${cap} then greatest(${read}, ${stats[i]}, t.n / 2) else greatest(${read}, ${stats[i]}) end)`;
  });
  const idfs = dfs.map((df, i) => `ln(1 + (greatest(t.n - ${df}, 0) + 0.5) / (${df} + 0.5)) as w${i}`);
  const score = terms.map((_, i) => `w.w${i} * u.f${i} * ${K1 + 1} / (u.f${i} + ${K1} * ${norm})`).join(' + ');
  const sql = `with q as not materialized (select ${terms.map((t, i) => `${t} as t${i}`).join(', ')}${exclude ? `, ${exclude} as x` : ''}),
     ${sets.map((s) => `${s.name} as (${s.sql})`).join(',\n     ')},
     t as (select greatest(coalesce((${totalSql}), 0), ${[...rare.map((i) => `(select count(*) from c${i})`), ...stats].join(', ')}, 1)::float8 as n),
     w as materialized (select ${idfs.join(', ')} from t),
     u as (select distinct on (id) * from (${sets.map((s) => `select * from ${s.name}`).join(' union all ')}) a order by id)
     select u.id, (${score})::float8 as score from u, w order by score desc, u.id asc limit ?`;
  // The GIN index finds a rare word's matches without reading the rows that lack them. With a LIMIT the planner
  // prefers a sequential scan, which for words that rarely occur together reads most of the table.
  const rows = (await em.transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    return tx.execute(sql, [...params, ...sets.flatMap((s) => s.params), scope.versionId ?? scope.repositoryId, limit]);
  })) as { id: string; score: number }[];
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}
