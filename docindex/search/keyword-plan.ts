/**
 * The pure half of keyword search (keyword.ts runs it in PostgreSQL): the query parsed from web-search syntax, the
 * ways each term can match, and the plan of how its candidates are read (which terms are rare, which common, each
 * term's share of the candidates). No database here: keyword.ts reads the term statistics and writes the plan as SQL.
 */

/**
 * English stop words, and the words of a question that carry no topic ("is there a way", "I want to", "something"):
 * in a developer's own wording they would otherwise count as terms, and match pages by their filler.
 */
const STOP_WORDS = new Set(
  ('a an and are as at be but by do does did for from how i if in into is it its me my of on or so that the their then there these ' +
    'this to was what when where which who why will with can could should would you your we our use using ' +
    'way ways possible want wants need needs able try trying something anything thing things any some just also own').split(' '),
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

/**
 * Whether a query names something in code: a word in camelCase or PascalCase (`setErrorHandler`, `TypeBox`), joined by
 * underscores or starting with one (`FST_ERR_CTP`, `__proto__`), a member or path (`reply.send`, `Command::new`; not
 * `e.g.`), or a call (`listen()`). Hybrid search trusts its keyword list more for such a query (search.ts,
 * `fusionAlpha`).
 */
export function hasIdentifier(query: string): boolean {
  return query.split(/\s+/).some((word) => IDENTIFIER.test(word));
}
const IDENTIFIER = /[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9_]|^_|[a-z]\.[a-z]{2}|\w::\w|\(\)/;

const hasWord = (s: string) => /[\p{L}\p{N}]/u.test(s);

/**
 * A command-line option (`--verbose`, `-v`, `-vvv`, `-rf`) or a negative number (`-1`) is searched for, not excluded:
 * developers ask about flags (`parse -D KEY=VALUE pairs`, `make -h work as well as --help`), and reading them as
 * exclusions left out the very snippets that document them. A word of four letters or more after one dash stays an
 * exclusion, as in web search.
 */
const FLAG_OR_NUMBER = /^(?:--[^-]|-[A-Za-z]{1,3}[,.;:!?)]*$|-\d)/;

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
    if (word.startsWith('-') && word.length > 1 && !FLAG_OR_NUMBER.test(word)) {
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

/** One way a term can match: `phraseto_tsquery(config, text)`. */
export interface TermForm {
  config: 'simple' | 'english';
  text: string;
}

/** The ways one term can match: as written, by its English stems, and as the phrase of its split identifiers. */
export function termForms(term: string): TermForm[] {
  const forms: TermForm[] = [
    { config: 'simple', text: term },
    { config: 'english', text: term },
  ];
  const split = splitIdentifiers(term);
  if (split.trim().toLowerCase() !== term.trim().toLowerCase() && hasWord(split)) forms.push({ config: 'simple', text: split });
  return forms;
}

export interface PlannedTerm {
  forms: TermForm[];
  /** How many snippets of the scope the statistics show holding the term; 0 when they do not say (see keyword.ts). */
  snippets: number;
  /**
   * Held by at least its share of snippets: its matches are read in table order up to its share, and weighed by
   * `snippets`. Otherwise the term is rare: every match is read through the GIN index and counted for its weight.
   */
  common: boolean;
}

export interface KeywordPlan {
  /** The included terms, in the query's order (`t0`, `t1`... in the SQL). */
  terms: PlannedTerm[];
  /** The excluded terms' forms: a snippet matching any of them is left out. */
  exclude: TermForm[][];
  /** Each term's share of the candidates read: `candidates` divided between the terms, at least 1. */
  share: number;
  /** Indices into `terms` of the rare terms, and of the common ones. */
  rare: number[];
  common: number[];
}

/**
 * The plan for a parsed query with at least one included term, given each term's stored snippet count (in the order
 * of `parsed.include`) and the most candidates to read (SEARCH_RANK_CANDIDATES).
 */
export function planKeywordSearch(parsed: ParsedQuery, snippets: readonly number[], candidates: number): KeywordPlan {
  const share = Math.max(1, Math.ceil(candidates / parsed.include.length));
  const terms = parsed.include.map((term, i) => {
    const count = snippets[i] ?? 0;
    return { forms: termForms(term), snippets: count, common: count >= share };
  });
  const where = (common: boolean) => terms.flatMap((t, i) => (t.common === common ? [i] : []));
  return { terms, exclude: parsed.exclude.map(termForms), share, rare: where(false), common: where(true) };
}
