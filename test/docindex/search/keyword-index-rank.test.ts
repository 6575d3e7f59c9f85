import { describe, expect, it, vi } from 'vitest';
import { AVERAGE_LEXEMES, B, K1, UNIT, WEIGHTS } from '../../../docindex/search/keyword.js';
import { IndexBuilder } from '../../../docindex/search/keyword-index.js';
import { matches, operands, tsRank, type TsQuery } from '../../../docindex/search/tsquery.js';

/**
 * The index's ranking (KeywordIndex.rank) takes shortcuts for speed: merged postings, tabled ts_rank contributions,
 * precomputed length norms. Here it is checked against the plain definition (every snippet matched and ranked with
 * tsquery.ts, which keyword-index.test.ts checks against PostgreSQL), on randomized indexes: the same candidates in
 * the same order with bit-identical scores.
 */

const W = WEIGHTS.slice(1, -1).split(',').map((w) => Math.fround(Number(w)));

function random(seed: number): () => number {
  return () => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) / 0x80000000);
}

interface Doc {
  id: string;
  documentId: string;
  /** Lexeme -> positions with weight (as the index stores them: position | weight << 14). */
  lexemes: Map<string, number[]>;
}

/** `n` snippets over a skewed vocabulary: words `w<i>`, half with a second form `w<i>s` at the same positions, some repeated. */
function corpus(seed: number, n: number): Doc[] {
  const rnd = random(seed);
  const docs: Doc[] = [];
  for (let i = 0; i < n; i++) {
    const lexemes = new Map<string, number[]>();
    const words = 1 + Math.floor(rnd() * 30);
    for (let p = 1; p <= words; p++) {
      const w = Math.floor(40 * rnd() ** 2);
      const weight = rnd() < 0.1 ? 3 : rnd() < 0.1 ? 2 : rnd() < 0.2 ? 1 : 0;
      for (const l of w % 2 ? [`w${w}`] : [`w${w}`, `w${w}s`]) lexemes.set(l, [...(lexemes.get(l) ?? []), p | (weight << 14)]);
    }
    // Some lexemes without positions (a stripped vector), which count but add no weight.
    if (rnd() < 0.05) lexemes.set(`w${Math.floor(40 * rnd())}`, []);
    docs.push({ id: `s${String(Math.floor(rnd() * 1e6)).padStart(7, '0')}-${i}`, documentId: `d${Math.floor(rnd() * (n / 4))}`, lexemes });
  }
  return docs;
}

const vectorText = (doc: Doc) =>
  [...doc.lexemes].map(([l, ps]) => `'${l}'${ps.length ? ':' + ps.map((p) => `${p & 0x3fff}${'DCBA'[p >> 14] === 'D' ? '' : 'DCBA'[p >> 14]}`).join(',') : ''}`).join(' ');

/** keyword.ts's BM25 over every snippet, written out plainly: the best `pool`, score descending then id. */
function reference(docs: Doc[], terms: (TsQuery | undefined)[], exclude: TsQuery[], pool: number) {
  const lexemesOf = (d: Doc) => (l: string) => (d.lexemes.has(l) ? Uint16Array.from(d.lexemes.get(l)!) : undefined);
  const kept = docs.filter((d) => !exclude.some((q) => matches(q, lexemesOf(d))));
  const tfs = terms.map((q) => kept.map((d) => (q && matches(q, lexemesOf(d)) ? tsRank(W, q, lexemesOf(d), operands(q)) * UNIT : undefined)));
  const idf = tfs.map((tf) => {
    const df = tf.filter((x) => x !== undefined).length;
    return Math.log(1 + (Math.max(Math.max(1, docs.length) - df, 0) + 0.5) / (df + 0.5));
  });
  const out = kept.flatMap((d, i) => {
    if (tfs.every((tf) => tf[i] === undefined)) return [];
    const norm = 1 - B + (B * d.lexemes.size) / AVERAGE_LEXEMES;
    const termScores = tfs.map((tf, t) => (tf[i] === undefined ? 0 : (idf[t]! * tf[i]! * (K1 + 1)) / (tf[i]! + K1 * norm)));
    let score = 0;
    for (const s of termScores) score += s;
    return [{ id: d.id, documentId: d.documentId, terms: termScores, score }];
  });
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, pool);
}

const lexeme = (l: string): TsQuery => ({ op: 'lexeme', lexeme: l });
const or = (...ls: string[]): TsQuery => ls.map(lexeme).reduce((a, b) => ({ op: 'or', left: a, right: b }));

describe('KeywordIndex.rank', () => {
  it('finds exactly the plain ranking on randomized indexes', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const docs = corpus(seed, 1500);
      const builder = new IndexBuilder();
      for (const d of docs) builder.add(d.id, d.documentId, vectorText(d));
      const index = builder.finish();
      const rnd = random(seed * 7);
      const word = () => Math.floor(40 * rnd() ** 1.5);
      // A word and its stem, one lexeme, three forms, a word the index lacks, a term with no lexemes.
      const term = (): TsQuery | undefined => {
        const w = word();
        const kind = rnd();
        if (kind < 0.5) return or(`w${w}`, `w${w}s`);
        if (kind < 0.75) return lexeme(`w${w}`);
        if (kind < 0.85) return or(`w${w}`, `w${w}s`, `w${word()}`);
        if (kind < 0.95) return or(`w${w}`, 'missing');
        return undefined;
      };
      for (let q = 0; q < 25; q++) {
        // Up to six terms: the first four rank into arrays kept with the index, reused query after query.
        const terms = Array.from({ length: 1 + Math.floor(rnd() * 6) }, term);
        const exclude = rnd() < 0.3 ? [or(`w${word()}`, `w${word()}s`)] : [];
        for (const pool of [1, 10, 100, 2000]) expect(index.rank(terms, exclude, pool), `seed ${seed} query ${q} pool ${pool}`).toEqual(reference(docs, terms, exclude, pool));
      }
    }
  });

  it('ranks a one-term query (scored straight into the best pool) exactly, ties by id', () => {
    for (const seed of [11, 12]) {
      // Every snippet twice under other ids: every score is tied at least once.
      const docs = corpus(seed, 800).flatMap((d, i) => [d, { ...d, id: `t${String((i * 7919) % 800).padStart(4, '0')}-${i}` }]);
      const builder = new IndexBuilder();
      for (const d of docs) builder.add(d.id, d.documentId, vectorText(d));
      const index = builder.finish();
      for (let w = 0; w < 40; w++) {
        // One lexeme, a word and its stem, a lexeme twice (as `'router' | 'router'`), a form the index lacks, a phrase.
        const phrase: TsQuery = { op: 'phrase', distance: 1, left: lexeme(`w${w}`), right: lexeme(`w${(w * 7) % 40}`) };
        for (const q of [lexeme(`w${w}`), or(`w${w}`, `w${w}s`), or(`w${w}`, `w${w}`), or('missing', `w${w}s`), phrase]) {
          for (const pool of [1, 3, 10, 100, 2000]) expect(index.rank([q], [], pool), `seed ${seed} word ${w} pool ${pool}`).toEqual(reference(docs, [q], [], pool));
        }
      }
    }
  });

  it('ranks several terms by their bounds (MaxScore) exactly, ties by id, with terms kept and not', () => {
    for (const seed of [31, 32, 33]) {
      // Every snippet twice under other ids: the worst of the pool is often tied with a snippet that must still enter.
      const docs = corpus(seed, 1200).flatMap((d, i) => [d, { ...d, id: `t${String((i * 7919) % 1200).padStart(4, '0')}-${i}` }]);
      const builder = new IndexBuilder();
      for (const d of docs) builder.add(d.id, d.documentId, vectorText(d));
      const index = builder.finish();
      const rnd = random(seed);
      for (let q = 0; q < 40; q++) {
        // Common and rare words together, so some terms' bounds fall under the pool's worst score and are skipped.
        const terms = Array.from({ length: 2 + Math.floor(rnd() * 4) }, () => {
          const w = Math.floor(40 * rnd() ** 2);
          return rnd() < 0.5 ? or(`w${w}`, `w${w}s`) : lexeme(`w${w}`);
        });
        for (const pool of [1, 3, 10, 100]) expect(index.rank(terms, [], pool), `seed ${seed} query ${q} pool ${pool}`).toEqual(reference(docs, terms, [], pool));
      }
    }
  });

  it("keeps a common term's matches for the next query, within its budget, and ranks as without them", () => {
    const docs = corpus(21, 4000);
    const builder = new IndexBuilder();
    for (const d of docs) builder.add(d.id, d.documentId, vectorText(d));
    const index = builder.finish();
    const merges = vi.spyOn(index as unknown as { termMatches: () => unknown }, 'termMatches');
    // w0 to w3 match most snippets; w39 few (never kept).
    const common = or('w0', 'w0s');
    expect(index.rank([common, or('w2', 'w2s')], [], 10)).toEqual(reference(docs, [common, or('w2', 'w2s')], [], 10));
    expect(merges).toHaveBeenCalledTimes(2);
    expect(index.rank([common], [or('w2', 'w2s')], 10)).toEqual(reference(docs, [common], [or('w2', 'w2s')], 10));
    expect(index.rank([lexeme('w39'), common], [], 10)).toEqual(reference(docs, [lexeme('w39'), common], [], 10));
    expect(merges).toHaveBeenCalledTimes(3); // only w39, which matches too few to be kept
    expect(index.keptTermStats.terms).toBe(2);
    // More common terms than the budget holds (8 terms matching every snippet): the least recently used go.
    for (let w = 0; w < 40; w += 2) expect(index.rank([lexeme(`w${w}`), or(`w${w + 1}`)], [], 5)).toEqual(reference(docs, [lexeme(`w${w}`), or(`w${w + 1}`)], [], 5));
    const { terms, bytes } = index.keptTermStats;
    expect(bytes).toBeLessThanOrEqual(docs.length * 8 * 12);
    expect(terms).toBeGreaterThan(2);
    expect(index.rank([common], [], 10)).toEqual(reference(docs, [common], [], 10));
  });
});
