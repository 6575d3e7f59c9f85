import type { EntityManager } from '@mikro-orm/postgresql';
import { join, raw, sql } from '../../db/sql.js';
import { EVIDENCE_POOL, withPageEvidence, type Candidate } from './evidence.js';
import { B, K1, AVERAGE_LEXEMES, inScope, tsquery, UNIT, WEIGHTS, type Ranked, type Scope } from './keyword.js';
import { parseQuery, termForms } from './keyword-plan.js';
import type { Cached } from './scope-cache.js';
import { matches, operands, parseTsQuery, tsRank, type TsQuery } from './tsquery.js';

/**
 * Keyword search in the API process (docs/ranking.md, "Keyword index in memory"): a scope's `search_vector`s read
 * once per index stamp into posting lists, and the BM25 ranking of keyword.ts computed over every match in
 * JavaScript, with PostgreSQL's own matching and `ts_rank` (tsquery.ts). PostgreSQL then only stems the query's
 * terms (cached per term). The SQL ranking reads a bounded sample of a very common word's matches; this reads them
 * all, so the two agree wherever the SQL reads every match, and this is exact where it samples.
 */

const WEIGHT_VALUES = WEIGHTS.slice(1, -1).split(',').map((w) => Math.fround(Number(w)));

/** One lexeme's postings: the snippets holding it (ascending), and each one's positions at `starts[k]..starts[k+1]`. */
interface Postings {
  docs: Int32Array;
  starts: Int32Array;
  positions: Uint16Array;
}

/** Reads `tsvector_out`'s text (`'lexeme':1A,5 'it''s':3`), calling `each` with every lexeme and its positions. */
export function parseTsVector(text: string, each: (lexeme: string, positions: number[]) => void): void {
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (text[i] === ' ') i++;
    if (i >= n) break;
    if (text[i] !== "'") throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i} in a tsvector`);
    let lexeme = '';
    for (i++; i < n; i++) {
      const c = text[i]!;
      if (c === "'" && text[i + 1] === "'") lexeme += text[++i];
      else if (c === '\\' && i + 1 < n) lexeme += text[++i];
      else if (c === "'") break;
      else lexeme += c;
    }
    i++;
    const positions: number[] = [];
    if (text[i] === ':') {
      i++;
      for (;;) {
        let p = 0;
        while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) p = p * 10 + text.charCodeAt(i++) - 48;
        // Weights: A = 3 .. D = 0 (D is not printed).
        const letter = text[i];
        let weight = 0;
        if (letter === 'A' || letter === 'B' || letter === 'C') {
          weight = 3 - (letter.charCodeAt(0) - 65);
          i++;
        }
        positions.push((Math.min(p, 0x3fff) | (weight << 14)) >>> 0);
        if (text[i] !== ',') break;
        i++;
      }
    }
    each(lexeme, positions);
  }
}

export class KeywordIndex implements Cached {
  readonly bytes: number;
  private readonly postings = new Map<string, Postings>();

  /** Rows in snippet id order: each snippet's id, its document, and its `search_vector` as text. */
  constructor(
    readonly ids: string[],
    private readonly documents: string[],
    vectors: (i: number) => string,
  ) {
    const building = new Map<string, { docs: number[]; starts: number[]; positions: number[] }>();
    this.lengths = new Int32Array(ids.length);
    let stored = 0;
    for (let d = 0; d < ids.length; d++) {
      let lexemes = 0;
      parseTsVector(vectors(d), (lexeme, positions) => {
        lexemes++;
        let b = building.get(lexeme);
        if (!b) building.set(lexeme, (b = { docs: [], starts: [], positions: [] }));
        b.docs.push(d);
        b.starts.push(b.positions.length);
        for (const p of positions) b.positions.push(p);
        stored += positions.length;
      });
      this.lengths[d] = lexemes;
    }
    let keys = 0;
    for (const [lexeme, b] of building) {
      b.starts.push(b.positions.length);
      this.postings.set(lexeme, { docs: Int32Array.from(b.docs), starts: Int32Array.from(b.starts), positions: Uint16Array.from(b.positions) });
      keys += 2 * lexeme.length + 120;
    }
    let postings = 0;
    for (const p of this.postings.values()) postings += p.docs.length;
    this.bytes = postings * 8 + stored * 2 + keys + ids.length * 80;
  }

  private readonly lengths: Int32Array;

  get size(): number {
    return this.ids.length;
  }

  /**
   * Each matching snippet's `ts_rank * UNIT` for one term (keyword.ts's `f<i>`), by snippet: the union of its
   * operands' postings, each snippet matched and ranked on its own lexemes.
   */
  private termFrequencies(q: TsQuery): Map<number, number> {
    const items = operands(q);
    const lists = items.map((lexeme) => ({ lexeme, postings: this.postings.get(lexeme), at: 0 }));
    const docs = new Set<number>();
    for (const l of lists) if (l.postings) for (const d of l.postings.docs) docs.add(d);
    const out = new Map<number, number>();
    const order = [...docs].sort((a, b) => a - b);
    const current = new Map<string, Uint16Array>();
    for (const d of order) {
      current.clear();
      for (const l of lists) {
        const p = l.postings;
        if (!p) continue;
        while (l.at < p.docs.length && p.docs[l.at]! < d) l.at++;
        if (l.at < p.docs.length && p.docs[l.at] === d) current.set(l.lexeme, p.positions.subarray(p.starts[l.at]!, p.starts[l.at + 1]!));
      }
      const lexemes = (lexeme: string) => current.get(lexeme);
      if (matches(q, lexemes)) out.set(d, tsRank(WEIGHT_VALUES, q, lexemes, items) * UNIT);
    }
    return out;
  }

  /** Snippets matching any of `queries`. */
  private matching(queries: TsQuery[]): Set<number> {
    const out = new Set<number>();
    for (const q of queries) for (const d of this.termFrequencies(q).keys()) out.add(d);
    return out;
  }

  /**
   * keyword.ts's ranking over every match: `terms` are the included terms' queries (undefined: a term with no
   * lexemes, which matches nothing), `exclude` the excluded ones'. The best `pool` candidates, best first.
   */
  rank(terms: (TsQuery | undefined)[], exclude: TsQuery[], pool: number): Candidate[] {
    const n = Math.max(1, this.ids.length);
    const excluded = this.matching(exclude);
    // As in the SQL, a term's df counts the snippets it is read in: excluded ones are not.
    const perTerm = terms.map((q) => {
      const m = q ? this.termFrequencies(q) : new Map<number, number>();
      for (const d of excluded) m.delete(d);
      return m;
    });
    const idf = perTerm.map((m) => Math.log(1 + (Math.max(n - m.size, 0) + 0.5) / (m.size + 0.5)));
    const candidates = new Set<number>();
    for (const m of perTerm) for (const d of m.keys()) candidates.add(d);
    const scored: Candidate[] = [];
    for (const d of candidates) {
      const norm = 1 - B + (B * this.lengths[d]!) / AVERAGE_LEXEMES;
      const scores = perTerm.map((m, t) => {
        const tf = m.get(d) ?? 0;
        return tf ? (idf[t]! * tf * (K1 + 1)) / (tf + K1 * norm) : 0;
      });
      scored.push({ id: this.ids[d]!, documentId: this.documents[d]!, terms: scores, score: scores.reduce((a, b) => a + b, 0) });
    }
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return scored.slice(0, pool);
  }

  dispose(): void {
    this.postings.clear();
  }
}

/** Reads a scope's snippets' lexemes into an index. */
export async function loadKeywordIndex(em: EntityManager, scope: Scope): Promise<KeywordIndex> {
  const q = sql`select s.id, s.document_id, s.search_vector::text as v from snippet s where ${inScope(scope)} order by s.id collate "C"`;
  const rows: { id: string; document_id: string; v: string | null }[] = await em.execute(q.text, [...q.params]);
  return new KeywordIndex(
    rows.map((r) => r.id),
    rows.map((r) => r.document_id),
    (i) => rows[i]!.v ?? '',
  );
}

/** Term texts to their tsquery (a stemming of PostgreSQL's dictionaries, which do not change while it runs). */
const TERM_CACHE_SIZE = 10_000;
const termQueryCache = new Map<string, TsQuery | undefined>();

/** Each term's query (as keyword.ts builds it: any of its forms), PostgreSQL asked only for terms not seen before. */
export async function termQueries(em: EntityManager, terms: string[]): Promise<(TsQuery | undefined)[]> {
  const missing = [...new Set(terms.filter((t) => !termQueryCache.has(t)))];
  if (missing.length) {
    const columns = missing.map((t, i) => sql`${tsquery(termForms(t))}::text as ${raw(`q${i}`)}`);
    const q = sql`select ${join(columns)}`;
    const [row] = (await em.execute(q.text, [...q.params])) as Record<string, string>[];
    missing.forEach((t, i) => {
      if (termQueryCache.size >= TERM_CACHE_SIZE) termQueryCache.delete(termQueryCache.keys().next().value!);
      termQueryCache.set(t, parseTsQuery(row![`q${i}`] ?? ''));
    });
  }
  return terms.map((t) => termQueryCache.get(t));
}

/** keywordSearch (keyword.ts) answered from an index: the same query syntax, ranking and page evidence. */
export async function searchKeywordIndex(em: EntityManager, index: KeywordIndex, query: string, limit: number): Promise<Ranked[]> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return [];
  const [terms, exclude] = await Promise.all([termQueries(em, parsed.include), termQueries(em, parsed.exclude)]);
  const candidates = index.rank(terms, exclude.filter((q): q is TsQuery => q !== undefined), Math.max(limit, EVIDENCE_POOL));
  return withPageEvidence(candidates, limit);
}
