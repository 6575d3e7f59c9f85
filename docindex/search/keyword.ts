import type { EntityManager } from '@mikro-orm/postgresql';
import { execute, join, raw, sql, type Sql } from '../../db/sql.js';
import { pageNames } from './page-name-lookup.js';
import { EVIDENCE_POOL, withPageEvidence, type Candidate, type PageNaming } from './evidence.js';
import { planKeywordSearch, parseQuery, termForms, type KeywordPlan, type TermForm } from './keyword-plan.js';

/**
 * Keyword search over `snippet.search_vector` (PostgreSQL full-text search; see Migration20261127000000_search_stems):
 * per field, the identifier-preserving `simple` lexemes and the `english` stems beside them. The query takes
 * web-search syntax: `"a phrase"`, `-excluded`, `-"excluded phrase"`, and `or` (ignored: terms are alternatives
 * anyway); a command-line option (`--verbose`, `-v`) is a term, not an exclusion (keyword-plan.ts). Each term or
 * phrase matches as written, by its English stems (`connections` finds `connection`), or with its code identifiers
 * split (`useEffect` also as the phrase `use effect`, `snake_case` as `snake case`, `Foo.bar` as `foo bar`), exactly
 * as the indexed text was split. English stop words are dropped from unquoted terms unless
 * nothing else is left, since the `simple` configuration indexes them. Ranking: see keywordSearch.
 */

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
export const WEIGHTS = '{0.15, 0.3333, 0.6667, 1.0}';
/** ts_rank of one occurrence of weight w is w / 1.645 (the sum of 1/i^2); this makes one content occurrence 1. */
export const UNIT = 1.64493406685 / 0.3333;
/** BM25's term-frequency saturation and length normalisation. */
export const K1 = 1.2;
export const B = 0.75;
/** A snippet's usual number of distinct lexemes (stems and split identifiers included), the length norm's 1. */
export const AVERAGE_LEXEMES = 64;

/** BM25's idf of a term held by `df` of `snippets` snippets. */
export function idfOf(snippets: number, df: number): number {
  return Math.log(1 + (Math.max(Math.max(1, snippets) - df, 0) + 0.5) / (df + 0.5));
}

/** A scope's best keyword candidates by BM25, before page evidence, and the statistics their scores were weighed by. */
export interface Ranking {
  candidates: Candidate[];
  /** The scope's snippets, and each included term's df there (the snippets it was read in). */
  snippets: number;
  df: number[];
}

/** A Ranking with what page evidence needs (evidence.ts): the query's terms and the pages' names. */
export interface KeywordCandidates extends Ranking {
  naming: PageNaming;
}

/**
 * Statistics shared by several scopes' rankings, as if their snippets were one collection: their snippets and each
 * term's df summed. Each scope weighs a word by how rare it is there, so a word that is rare in a library the question
 * is not about (`plugin` in a library of data classes) outweighs the same word where every page uses it; weighed by
 * the shared statistics, the scores of different libraries are on one scale (docs/ranking.md, "Across libraries").
 */
export function sharedStatistics(rankings: Ranking[]): { snippets: number; df: number[] } {
  const df: number[] = [];
  for (const r of rankings) r.df.forEach((f, t) => (df[t] = (df[t] ?? 0) + f));
  return { snippets: rankings.reduce((sum, r) => sum + r.snippets, 0), df };
}

/**
 * The best `limit` of a scope's candidates with page evidence (evidence.ts). With `shared` statistics
 * (sharedStatistics), each term's scores are first weighed again by its idf over them instead of the scope's.
 */
export function rankCandidates(found: KeywordCandidates | undefined, limit: number, shared?: { snippets: number; df: number[] }): Ranked[] {
  if (!found) return [];
  let candidates = found.candidates;
  if (shared) {
    const factor = found.df.map((f, t) => idfOf(shared.snippets, shared.df[t] ?? f) / idfOf(found.snippets, f));
    candidates = candidates.map((c) => {
      const terms = c.terms.map((v, t) => v * factor[t]!);
      return { ...c, terms, score: terms.reduce((a, b) => a + b, 0) };
    });
  }
  return withPageEvidence(candidates, limit, found.naming);
}

/**
 * A lexeme held by fewer snippets of a scope than this has no `search_term` row: such a word is rare, read and
 * counted at query time. (With SEARCH_RANK_CANDIDATES far below its default, a term's share can be smaller than this;
 * a word between the two is then read to its share and taken as common, as for a scope without statistics.)
 */
export const MIN_TERM_SNIPPETS = 20;

/** The scope's rows of a table (`alias`: snippet `s` or search_term `t`). */
export function inScope(scope: Scope, alias = 's'): Sql {
  const a = raw(alias);
  return scope.versionId === null
    ? sql`${a}.repository_id = ${scope.repositoryId} and ${a}.version_id is null`
    : sql`${a}.repository_id = ${scope.repositoryId} and ${a}.version_id = ${scope.versionId}`;
}


/**
 * Rewrites a scope's term statistics from its snippets (idempotent: the scope's rows are replaced in one
 * transaction). An indexing run calls it in the transaction that swaps its snippets in.
 */
export async function refreshTermStatistics(em: EntityManager, scope: Scope): Promise<void> {
  await em.transactional(async (tx) => {
    await execute(tx, sql`delete from search_term s where ${inScope(scope)}`);
    // ts_stat runs a query given as text: the scope goes in as quoted literals (format's %L), never as SQL.
    const inner =
      scope.versionId === null
        ? sql`format('select search_vector from snippet where repository_id = %L and version_id is null', ${scope.repositoryId}::text)`
        : sql`format('select search_vector from snippet where repository_id = %L and version_id = %L', ${scope.repositoryId}::text, ${scope.versionId}::text)`;
    await execute(
      tx,
      sql`insert into search_term (repository_id, version_id, lexeme, snippets)
       select ${scope.repositoryId}, ${scope.versionId}, word, ndoc from ts_stat(${inner}) where ndoc >= ${raw(String(MIN_TERM_SNIPPETS))}`,
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
  const rows = (await execute(
    em,
    sql`select f.i, f.k, case when count(*) = 1 then min(coalesce(t.snippets, 0)) else 0 end::int as df
     from json_to_recordset(${JSON.stringify(forms)}::json) as f(i int, k int, config text, text text)
     cross join lateral unnest(tsvector_to_array(to_tsvector(f.config::regconfig, f.text))) as l(lexeme)
     left join search_term t on ${inScope(scope, 't')} and t.lexeme = l.lexeme
     group by f.i, f.k`,
  )) as { i: number; df: number }[];
  const df = terms.map(() => 0);
  for (const r of rows) df[r.i] = Math.max(df[r.i]!, Number(r.df));
  return df;
}

/**
 * One term as a tsquery: any of its forms may match (`phraseto_tsquery` of a stop word is empty, and `||` with an
 * empty query is the other side).
 */
export const tsquery = (forms: TermForm[]): Sql => sql`(${join(forms.map((f) => sql`phraseto_tsquery(${raw(`'${f.config}'`)}, ${f.text})`), ' || ')})`;

/** `q`: each included term's tsquery as `t<i>`, and any excluded term's as `x`. */
function queries(plan: KeywordPlan): Sql {
  const columns = plan.terms.map((t, i) => sql`${tsquery(t.forms)} as ${raw(`t${i}`)}`);
  if (plan.exclude.length) columns.push(sql`${join(plan.exclude.map(tsquery), ' || ')} as x`);
  return sql`q as not materialized (select ${join(columns)})`;
}

/** The first `limit` snippets of the scope that match (`match`: SQL over `s` and `q`), none excluded. */
function candidates(plan: KeywordPlan, scope: Scope, match: string, limit: number): Sql {
  // ts_rank scores the words of a phrase one by one: a snippet that does not match the term gets nothing for it.
  const tfs = plan.terms.map((_, i) => `case when s.search_vector @@ q.t${i} then ts_rank('${WEIGHTS}', s.search_vector, q.t${i}, 0) * ${UNIT} else 0 end as f${i}`);
  const excluded = plan.exclude.length ? ' and not s.search_vector @@ q.x' : '';
  // A candidate carries its length and term frequencies, not its vector: the sets stay small enough to stay in memory.
  return sql`select s.id, s.document_id, length(s.search_vector)::float8 as len, ${raw(tfs.join(', '))} from snippet s, q where ${inScope(scope)} and ${raw(match)}${raw(excluded)} limit ${limit}`;
}

/** The candidate sets: `c<i>` for each rare term, through the GIN index; `cc` for the common terms together. */
function candidateSets(plan: KeywordPlan, scope: Scope): { name: string; query: Sql }[] {
  const sets = plan.rare.map((i) => ({ name: `c${i}`, query: candidates(plan, scope, `s.search_vector @@ q.t${i}`, plan.share) }));
  if (plan.common.length) {
    // `is true` keeps the planner off the GIN index: the scope's index, read in order, finds a common word at once.
    const any = plan.common.map((i) => `q.t${i}`).join(' || ');
    sets.push({ name: 'cc', query: candidates(plan, scope, `(s.search_vector @@ (${any})) is true`, plan.share * plan.common.length) });
  }
  return sets;
}

const counted = (i: number) => `(select count(*) from c${i})`;

/** `t`: the scope's number of snippets, at least as many as any term was read or stored in. */
function total(plan: KeywordPlan, scope: Scope): Sql {
  const stored =
    scope.versionId === null
      ? sql`select total_snippets from library where id = ${scope.repositoryId}`
      : sql`select total_snippets from library_version where id = ${scope.versionId}`;
  const floors = [...plan.rare.map(counted), ...plan.terms.map((t) => t.snippets)].join(', ');
  return sql`t as (select greatest(coalesce((${stored}), 0), ${raw(floors)}, 1)::float8 as n)`;
}

/** Each term's idf as `w<i>` (over `t`), once per query. */
function idfs(plan: KeywordPlan): Sql {
  const dfs = plan.terms.map((term, i) => {
    if (term.common) return `${term.snippets}::float8`;
    const read = `${counted(i)}::float8`;
    return `(case when ${read} >= ${plan.share} then greatest(${read}, ${term.snippets}, t.n / 2) else greatest(${read}, ${term.snippets}) end)`;
  });
  return raw(dfs.map((df, i) => `${df} as d${i}, ln(1 + (greatest(t.n - ${df}, 0) + 0.5) / (${df} + 0.5)) as w${i}`).join(', '));
}

/** A candidate's (`c`: its alias) score for each term from the weights `w` (see keywordSearch). */
function termScores(plan: KeywordPlan, c: string): string[] {
  const norm = `(1 - ${B} + ${B} * ${c}.len / ${AVERAGE_LEXEMES})`;
  return plan.terms.map((_, i) => `(w.w${i} * ${c}.f${i} * ${K1 + 1} / (${c}.f${i} + ${K1} * ${norm}))::float8`);
}

/** The whole ranking query of a plan: the best `limit` candidates with their scores. */
function rankingSql(plan: KeywordPlan, scope: Scope, limit: number): Sql {
  const sets = candidateSets(plan, scope);
  const union = sets.map((s) => `select * from ${s.name}`).join(' union all ');
  return sql`with ${queries(plan)},
     ${join(sets.map((s) => sql`${raw(s.name)} as (${s.query})`), ',\n     ')},
     ${total(plan, scope)},
     w as materialized (select ${idfs(plan)} from t),
     u as (select distinct on (id) * from (${raw(union)}) a order by id),
     r as (select u.*, (${raw(termScores(plan, 'u').join(' + '))})::float8 as score from u, w order by score desc, u.id asc limit ${limit})
     select r.id, r.document_id, r.score, array[${raw(termScores(plan, 'r').join(', '))}] as terms, t.n, array[${raw(plan.terms.map((_, i) => `w.d${i}`).join(', '))}] as df
     from t cross join w left join r on true order by r.score desc, r.id asc`;
}

/**
 * BM25-style ranking in PostgreSQL. For each query term t (its forms as in termForms), with N the snippets of the scope:
 *
 *   score(d) = sum over t of idf(t) * tf(t, d) * (K1 + 1) / (tf(t, d) + K1 * (1 - B + B * len(d) / AVERAGE_LEXEMES))
 *   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
 *
 * where tf(t, d) is ts_rank of t in d with the field weights above (so a rare word in a body outweighs a common word
 * in a title) and len(d) the snippet's distinct lexemes. Ties: snippet id.
 *
 * Candidates (planKeywordSearch): each term has a share of `candidates` (divided by the number of terms). A term that
 * the scope's statistics (`search_term`) show held by at least its share of snippets is common: the common terms'
 * matches are read together, up to their shares, in table order through the scope's index, and their df is the
 * statistics'. The GIN index is not asked for them: it would first gather every match, tens of thousands in a large
 * library. Every other term is rare: its matches are all read through the GIN index (which finds them without reading
 * the rows that lack them) and counted for its df; without statistics, a rare term that fills its share counts as held
 * by at least half the scope. A snippet holding every term holds the rare ones, so it is always read. When every term
 * is common, the candidates are a sample in table order, as any bounded read of words most snippets hold must be.
 */
export async function keywordSearch(em: EntityManager, scope: Scope, query: string, limit: number, options: KeywordOptions): Promise<Ranked[]> {
  return rankCandidates(await keywordCandidates(em, scope, query, limit, options), limit);
}

/** keywordSearch's candidates and statistics, before page evidence (rankCandidates); undefined for a query of no terms. */
export async function keywordCandidates(em: EntityManager, scope: Scope, query: string, limit: number, options: KeywordOptions): Promise<KeywordCandidates | undefined> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return undefined;
  const plan = planKeywordSearch(parsed, await termFrequencies(em, scope, parsed.include), options.candidates);
  // The GIN index finds a rare word's matches without reading the rows that lack them. With a LIMIT the planner
  // prefers a sequential scan, which for words that rarely occur together reads most of the table.
  const rows = (await em.transactional(async (tx) => {
    await tx.execute('set local enable_seqscan = off');
    return execute(tx, rankingSql(plan, scope, Math.max(limit, EVIDENCE_POOL)));
  })) as { id: string | null; document_id: string; terms: number[]; score: number; n: number; df: number[] }[];
  // The statistics come with every row, and alone (a row without a snippet) when nothing matched.
  const found = rows.filter((r) => r.id !== null);
  const pages = await pageNames(em, found.map((r) => r.document_id));
  return {
    candidates: found.map((r) => ({ id: r.id!, documentId: r.document_id, terms: r.terms.map(Number), score: Number(r.score) })),
    snippets: Number(rows[0]!.n),
    df: rows[0]!.df.map(Number),
    naming: { terms: parsed.include, ...pages },
  };
}
