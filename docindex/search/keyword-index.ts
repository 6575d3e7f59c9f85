import { setImmediate as yieldToEvents } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { execute, join, raw, sql } from '../../db/sql.js';
import { pageNames } from './page-name-lookup.js';
import { EVIDENCE_POOL, type Candidate } from './evidence.js';
import { AVERAGE_LEXEMES, B, idfOf, inScope, K1, rankCandidates, tsquery, UNIT, WEIGHTS, type KeywordCandidates, type Ranked, type Ranking, type Scope } from './keyword.js';
import { parseQuery, termForms } from './keyword-plan.js';
import type { Cached } from './scope-cache.js';
import { matches, operands, orContribution, parseTsQuery, tsRank, UnsupportedQueryError, type Lexemes, type TsQuery } from './tsquery.js';

/**
 * Keyword search in the API process (docs/ranking.md, "Keyword index in memory"): a scope's `search_vector`s read
 * once per index stamp into posting lists, and the BM25 ranking of keyword.ts computed over every match in
 * JavaScript, with PostgreSQL's own matching and `ts_rank` (tsquery.ts). PostgreSQL then only stems the query's
 * terms (cached per term). The SQL ranking reads a bounded sample of a very common word's matches; this reads them
 * all, so the two agree wherever the SQL reads every match, and this is exact where it samples.
 */

const WEIGHT_VALUES = WEIGHTS.slice(1, -1).split(',').map((w) => Math.fround(Number(w)));
const f = Math.fround;
/** orContribution of a posting with one position, by its weight (0 = D .. 3 = A), and with two, by weight * 4 + weight. */
const ONE_POSITION = [0, 1, 2, 3].map((w) => orContribution(WEIGHT_VALUES, Uint16Array.of(w << 14)));
const TWO_POSITIONS = Array.from({ length: 16 }, (_, ww) => orContribution(WEIGHT_VALUES, Uint16Array.of((ww >> 2) << 14, (ww & 3) << 14)));

/** Reads `tsvector_out`'s text (`'lexeme':1A,5 'it''s':3`), calling `each` with every lexeme and its positions. */
export function parseTsVector(text: string, each: (lexeme: string, positions: number[]) => void): void {
  let i = 0;
  const n = text.length;
  const escaped = text.includes('\\');
  while (i < n) {
    if (text.charCodeAt(i) === 32) {
      i++;
      continue;
    }
    if (text[i] !== "'") throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i} in a tsvector`);
    // A lexeme is quoted; a quote in it is doubled and a backslash escaped.
    let end = text.indexOf("'", i + 1);
    let lexeme: string;
    if (end > 0 && text[end + 1] !== "'" && !escaped) {
      lexeme = text.slice(i + 1, end);
    } else {
      lexeme = '';
      for (end = i + 1; end < n; end++) {
        const c = text[end]!;
        if (c === "'" && text[end + 1] === "'") lexeme += text[++end];
        else if (c === '\\' && end + 1 < n) lexeme += text[++end];
        else if (c === "'") break;
        else lexeme += c;
      }
    }
    i = end + 1;
    const positions: number[] = [];
    if (text[i] === ':') {
      i++;
      for (;;) {
        let p = 0;
        for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) p = p * 10 + c - 48;
        // Weights: A = 3 .. D = 0 (D is not printed).
        const c = text.charCodeAt(i);
        let weight = 0;
        if (c >= 65 && c <= 67) {
          weight = 3 - (c - 65);
          i++;
        }
        positions.push(Math.min(p, 0x3fff) | (weight << 14));
        if (text[i] !== ',') break;
        i++;
      }
    }
    each(lexeme, positions);
  }
}

/** A growable typed array. */
class Growing<T extends Int32Array | Uint16Array> {
  length = 0;
  constructor(
    public data: T,
    private readonly make: (n: number) => T,
  ) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
}

/**
 * Builds an index from rows read in any order; `finish` lays the postings out lexeme by lexeme. Sized from the
 * scope's counts when they are known, so its arrays are allocated once rather than grown by doubling and copying.
 */
export class IndexBuilder {
  readonly ids: string[] = [];
  readonly documents: string[] = [];
  readonly lengths: Growing<Int32Array>;
  private readonly lexemes = new Map<string, number>();
  // Per posting, in row order: its lexeme, its snippet, and where its positions start in `positions`.
  private readonly list: Growing<Int32Array>;
  private readonly doc: Growing<Int32Array>;
  private readonly from: Growing<Int32Array>;
  private readonly positions: Growing<Uint16Array>;

  constructor(expected: { snippets: number; postings: number } = { snippets: 1024, postings: 4096 }) {
    const int32 = (n: number) => new Int32Array(n);
    this.lengths = new Growing(int32(Math.max(1, expected.snippets)), int32);
    this.list = new Growing(int32(Math.max(1, expected.postings)), int32);
    this.doc = new Growing(int32(Math.max(1, expected.postings)), int32);
    this.from = new Growing(int32(Math.max(1, expected.postings)), int32);
    // Most postings have one or two positions.
    this.positions = new Growing(new Uint16Array(Math.max(1, Math.ceil(expected.postings * 1.5))), (n) => new Uint16Array(n));
  }

  /** Adds one snippet; parses `tsvector_out`'s text as parseTsVector does, straight into the postings. */
  add(id: string, documentId: string, text: string): void {
    const d = this.ids.length;
    this.ids.push(id);
    this.documents.push(documentId);
    let count = 0;
    const n = text.length;
    const escaped = text.includes('\\');
    let i = 0;
    while (i < n) {
      if (text.charCodeAt(i) === 32) {
        i++;
        continue;
      }
      const end = text.indexOf("'", i + 1);
      let lexeme: string;
      if (end > 0 && text.charCodeAt(end + 1) !== 39 && !escaped) {
        lexeme = text.slice(i + 1, end);
        i = end + 1;
      } else {
        // Escapes: the slow path, once for the whole rest of the text.
        let rest = 0;
        parseTsVector(text.slice(i), (l, positions) => {
          this.posting(l, d, positions);
          rest++;
        });
        count += rest;
        break;
      }
      count++;
      this.list.push(this.lexemeNumber(lexeme));
      this.doc.push(d);
      this.from.push(this.positions.length);
      if (text.charCodeAt(i) === 58) {
        i++;
        for (;;) {
          let p = 0;
          let c = text.charCodeAt(i);
          for (; c >= 48 && c <= 57; c = text.charCodeAt(++i)) p = p * 10 + c - 48;
          let weight = 0;
          if (c >= 65 && c <= 67) {
            weight = 3 - (c - 65);
            c = text.charCodeAt(++i);
          }
          this.positions.push(Math.min(p, 0x3fff) | (weight << 14));
          if (c !== 44) break;
          i++;
        }
      }
    }
    this.lengths.push(count);
  }

  private keyBytes = 0;

  private lexemeNumber(lexeme: string): number {
    let l = this.lexemes.get(lexeme);
    if (l === undefined) {
      this.lexemes.set(lexeme, (l = this.lexemes.size));
      this.keyBytes += 2 * lexeme.length + 80;
    }
    return l;
  }

  /** What the finished index will take (KeywordIndex.bytes), from what has been added so far. */
  get bytes(): number {
    return IndexBuilder.bytes(this.ids.length, this.list.length) + this.positions.length * 2 + this.lexemes.size * 4 + this.keyBytes;
  }

  /**
   * The part of an index's size its snippets (id, document, length and its norm, a ranking's arrays) and postings
   * alone take: a lower bound of the whole.
   */
  static bytes(snippets: number, postings: number): number {
    return 8 + postings * 8 + snippets * (100 + 15 + 4 + 8 + SCRATCH_BYTES);
  }

  private posting(lexeme: string, d: number, positions: number[]): void {
    this.list.push(this.lexemeNumber(lexeme));
    this.doc.push(d);
    this.from.push(this.positions.length);
    for (const p of positions) this.positions.push(p);
  }

  finish(): KeywordIndex {
    const postings = this.list.length;
    const lists = this.lexemes.size;
    // Counting sort by lexeme: row order is kept within each lexeme, so its snippets stay ascending.
    const starts = new Int32Array(lists + 1);
    for (let k = 0; k < postings; k++) starts[this.list.data[k]! + 1]!++;
    for (let l = 0; l < lists; l++) starts[l + 1]! += starts[l]!;
    const at = starts.slice(0, lists);
    const order = new Int32Array(postings);
    for (let k = 0; k < postings; k++) order[at[this.list.data[k]!]!++] = k;
    const docs = new Int32Array(postings);
    const positionStarts = new Int32Array(postings + 1);
    const positions = new Uint16Array(this.positions.length);
    let p = 0;
    for (let j = 0; j < postings; j++) {
      const k = order[j]!;
      docs[j] = this.doc.data[k]!;
      positionStarts[j] = p;
      const end = k + 1 < postings ? this.from.data[k + 1]! : this.positions.length;
      for (let q = this.from.data[k]!; q < end; q++) positions[p++] = this.positions.data[q]!;
    }
    positionStarts[postings] = p;
    return new KeywordIndex(this.ids, this.documents, this.lengths.data.slice(0, this.lengths.length), this.lexemes, starts, docs, positionStarts, positions);
  }
}

/** A term's matches: each matching snippet and its `ts_rank * UNIT` (keyword.ts's `f<i>`). */
interface TermMatches {
  docs: Int32Array;
  tf: Float64Array;
  /** Kept with the index (matchesOf): never written again, so what is learnt of it can be kept on it. */
  kept?: boolean;
  /** Its largest `tf / (tf + lengthNorm)` (KeywordIndex.bestRatio), once asked, on kept matches only. */
  bestRatio?: number;
}
const NO_MATCHES: TermMatches = { docs: new Int32Array(0), tf: new Float64Array(0) };
/**
 * A query's first terms rank into arrays kept with the index (KeywordIndex.scratch) rather than new ones: at 100k
 * snippets a common word's arrays are about a megabyte, and collecting them took about a quarter of a ranking's CPU.
 */
const TERM_SLOTS = 4;
/**
 * A common term's matches are kept with the index for the next query that asks for it (KeywordIndex.matchesOf):
 * merging its postings was a third to a half of a ranking's CPU at 100k snippets (bench/README.md, "Context"), and the words that
 * match many snippets are those a library's questions share. A term is kept when it matches at least
 * CACHED_TERM_MIN_MATCHES snippets, in a budget of CACHED_TERMS terms matching every snippet, least recently used out.
 */
const CACHED_TERMS = 8;
const CACHED_TERM_MIN_MATCHES = 1024;
/** What a ranking's arrays take per snippet (KeywordIndex.scratch): scores, two flags, a candidate, the terms' slots, the kept terms. */
const SCRATCH_BYTES = 8 + 1 + 1 + 4 + TERM_SLOTS * (4 + 8) + CACHED_TERMS * (4 + 8);

/**
 * A term's bound is raised by this much (rankByMaxScore): the bound is computed in floating point like the scores, and
 * must never fall below one, or a snippet tying the worst held could be skipped.
 */
const BOUND_MARGIN = 1 + 1e-9;
/** Past every snippet's number. */
const NO_SNIPPET = 0x7fffffff;

/** Orders candidates as the SQL does: score descending, then snippet id. */
const before = (a: { score: number; id: string }, b: { score: number; id: string }) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class KeywordIndex implements Cached {
  readonly bytes: number;
  /** Each snippet's `K1 * norm` of the BM25 denominator, computed once as termScore would each time. */
  private readonly lengthNorms: Float64Array;

  constructor(
    readonly ids: string[],
    private readonly documents: string[],
    private readonly lengths: Int32Array,
    private readonly lexemes: Map<string, number>,
    /** Lexeme l's postings are `starts[l]..starts[l + 1]`. */
    private readonly starts: Int32Array,
    /** Each posting's snippet (ascending within a lexeme). */
    private readonly docs: Int32Array,
    /** Each posting's positions are `positionStarts[k]..positionStarts[k + 1]` of `positions`. */
    private readonly positionStarts: Int32Array,
    private readonly positions: Uint16Array,
  ) {
    let keys = 0;
    for (const lexeme of lexemes.keys()) keys += 2 * lexeme.length + 80;
    this.lengthNorms = new Float64Array(lengths.length);
    for (let d = 0; d < lengths.length; d++) this.lengthNorms[d] = K1 * (1 - B + (B * lengths[d]!) / AVERAGE_LEXEMES);
    this.bytes = starts.byteLength + docs.byteLength + positionStarts.byteLength + positions.byteLength + lengths.byteLength * 3 + keys + ids.length * (100 + 15 + SCRATCH_BYTES);
  }

  get size(): number {
    return this.ids.length;
  }

  private postings(lexeme: string): [number, number] | undefined {
    const l = this.lexemes.get(lexeme);
    return l === undefined ? undefined : [this.starts[l]!, this.starts[l + 1]!];
  }

  private positionsAt(k: number): Uint16Array {
    return this.positions.subarray(this.positionStarts[k]!, this.positionStarts[k + 1]!);
  }

  /** The posting of `lexeme` for snippet `d` (binary search), or -1. */
  private find(range: [number, number], d: number): number {
    let lo = range[0];
    let hi = range[1];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.docs[mid]! < d) lo = mid + 1;
      else hi = mid;
    }
    return lo < range[1] && this.docs[lo] === d ? lo : -1;
  }

  private readonly keptTerms = new Map<string, TermMatches>();
  private keptBytes = 0;

  /**
   * termMatches, or the same matches kept from an earlier query (CACHED_TERMS): the index never changes, so they are
   * the same arrays it would compute, and rankings read them without writing.
   */
  private matchesOf(q: TsQuery, into?: TermMatches): TermMatches {
    const key = JSON.stringify(q);
    const kept = this.keptTerms.get(key);
    if (kept) {
      this.keptTerms.delete(key); // most recently used last
      this.keptTerms.set(key, kept);
      return kept;
    }
    const found = this.termMatches(q, into);
    const bytes = found.docs.length * (4 + 8);
    const budget = this.ids.length * CACHED_TERMS * (4 + 8);
    if (found.docs.length >= CACHED_TERM_MIN_MATCHES && bytes <= budget) {
      for (const [k, m] of this.keptTerms) {
        if (this.keptBytes + bytes <= budget) break;
        this.keptTerms.delete(k);
        this.keptBytes -= m.docs.length * (4 + 8);
      }
      this.keptTerms.set(key, { docs: found.docs.slice(), tf: found.tf.slice(), kept: true });
      this.keptBytes += bytes;
    }
    return found;
  }

  /** How many terms' matches are kept, and their bytes (for tests). */
  get keptTermStats(): { terms: number; bytes: number } {
    return { terms: this.keptTerms.size, bytes: this.keptBytes };
  }

  /**
   * One term's matches. A query of lexemes joined by `|` (a word and its stem, the usual term) is ranked straight
   * from the postings, each snippet's sum built in ts_rank's order; any other (a phrase) finds its snippets by
   * `matching` and ranks them one by one.
   */
  private termMatches(q: TsQuery, into?: TermMatches): TermMatches {
    const items = operands(q);
    const ranges = items.map((lexeme) => this.postings(lexeme));
    if (isDisjunction(q)) return this.disjunction(ranges.filter((r): r is [number, number] => r !== undefined && r[1] > r[0]), items.length, into);
    const lexemesOf = (d: number) => (lexeme: string) => {
      const i = items.indexOf(lexeme);
      const range = i < 0 ? undefined : ranges[i];
      const k = range ? this.find(range, d) : -1;
      return k < 0 ? undefined : this.positionsAt(k);
    };
    const docs = this.matching(q, lexemesOf);
    const tf = new Float64Array(docs.length);
    for (let i = 0; i < docs.length; i++) tf[i] = tsRank(WEIGHT_VALUES, q, lexemesOf(docs[i]!), items) * UNIT;
    return { docs, tf };
  }

  /**
   * A query of lexemes joined by `|`, ranked straight from the postings: the lexemes' ascending postings merged, each
   * snippet's sum built in ts_rank's order (lexeme by lexeme, each addition rounded to single precision as its float
   * sum is), divided by the number of operands `items`. Written into `into` when given (arrays of a snippet per
   * element), else into new arrays.
   */
  private disjunction(ranges: [number, number][], items: number, into?: TermMatches): TermMatches {
    if (ranges.length === 1) {
      // One lexeme found: its postings are the matches, already ascending.
      const [from, to] = ranges[0]!;
      const tf = into?.tf ?? new Float64Array(to - from);
      for (let k = from; k < to; k++) tf[k - from] = f(f(this.contribution(k)) / items) * UNIT;
      return { docs: this.docs.subarray(from, to), tf: tf.subarray(0, to - from) };
    }
    let total = 0;
    for (const [from, to] of ranges) total += to - from;
    const docs = into?.docs ?? new Int32Array(total);
    const tf = into?.tf ?? new Float64Array(total);
    let n = 0;
    if (ranges.length === 2) {
      // The usual term: a word and its stem. A two-way merge; 2^31 - 1 stands for an exhausted list.
      const [iEnd, jEnd] = [ranges[0]![1], ranges[1]![1]];
      let [i, j] = [ranges[0]![0], ranges[1]![0]];
      while (i < iEnd || j < jEnd) {
        const a = i < iEnd ? this.docs[i]! : 0x7fffffff;
        const b = j < jEnd ? this.docs[j]! : 0x7fffffff;
        let sum = 0;
        if (a <= b) sum = f(sum + this.contribution(i++));
        if (b <= a) sum = f(sum + this.contribution(j++));
        docs[n] = a <= b ? a : b;
        tf[n++] = f(sum / items) * UNIT;
      }
      return { docs: docs.subarray(0, n), tf: tf.subarray(0, n) };
    }
    const heads = ranges.map((r) => r[0]);
    const ends = ranges.map((r) => r[1]);
    for (;;) {
      let d = Infinity;
      for (let i = 0; i < heads.length; i++) if (heads[i]! < ends[i]! && this.docs[heads[i]!]! < d) d = this.docs[heads[i]!]!;
      if (d === Infinity) break;
      let sum = 0;
      for (let i = 0; i < heads.length; i++) {
        const k = heads[i]!;
        if (k < ends[i]! && this.docs[k] === d) {
          sum = f(sum + this.contribution(k));
          heads[i] = k + 1;
        }
      }
      docs[n] = d;
      tf[n++] = f(sum / items) * UNIT;
    }
    return { docs: docs.subarray(0, n), tf: tf.subarray(0, n) };
  }

  /** orContribution of posting k; from a table when it has one or two positions (it depends on their weights only). */
  private contribution(k: number): number {
    const from = this.positionStarts[k]!;
    const count = this.positionStarts[k + 1]! - from;
    if (count === 1) return ONE_POSITION[this.positions[from]! >> 14]!;
    if (count === 2) return TWO_POSITIONS[((this.positions[from]! >> 14) << 2) | (this.positions[from + 1]! >> 14)]!;
    return orContribution(WEIGHT_VALUES, this.positions, from, this.positionStarts[k + 1]!);
  }

  /**
   * The snippets matching `q`, ascending: a lexeme's postings, their union for `|`, their intersection for `&`, and
   * for a phrase the intersection of its words' postings checked position by position.
   */
  private matching(q: TsQuery, lexemesOf: (d: number) => Lexemes): Int32Array {
    switch (q.op) {
      case 'lexeme': {
        const range = this.postings(q.lexeme);
        return range ? this.docs.subarray(range[0], range[1]) : new Int32Array(0);
      }
      case 'or':
        return union(this.matching(q.left, lexemesOf), this.matching(q.right, lexemesOf));
      case 'and':
        return intersection(this.matching(q.left, lexemesOf), this.matching(q.right, lexemesOf));
      case 'phrase':
        return intersection(this.matching(q.left, lexemesOf), this.matching(q.right, lexemesOf)).filter((d) => matches(q, lexemesOf(d)));
      case 'not':
        throw new UnsupportedQueryError('a negation');
    }
  }

  /**
   * keyword.ts's ranking over every match: `terms` are the included terms' queries (undefined: a term with no
   * lexemes, which matches nothing), `exclude` the excluded ones'. The best `pool` candidates, best first.
   */
  rank(terms: (TsQuery | undefined)[], exclude: TsQuery[], pool: number): Candidate[] {
    return this.rankWithStatistics(terms, exclude, pool).candidates;
  }

  /** rank's candidates, with the statistics their scores were weighed by: the index's snippets and each term's df. */
  rankWithStatistics(terms: (TsQuery | undefined)[], exclude: TsQuery[], pool: number): Ranking {
    const only = terms.length === 1 && !exclude.length && pool > 0 ? terms[0] : undefined;
    if (only) return this.rankOneTerm(only, pool);
    return !exclude.length && pool > 0 ? this.rankByMaxScore(terms, pool) : this.rankEveryMatch(terms, exclude, pool);
  }

  /**
   * rank for a query of one term excluding nothing (a single word: in the context benchmark, the commonest words):
   * its matches scored in one pass into a heap of the best `pool`, without rankEveryMatch's per-snippet arrays and
   * selection. The same tf, idf and score as rankEveryMatch, and the same order (score, then id).
   */
  private rankOneTerm(q: TsQuery, pool: number): Ranking {
    const n = this.ids.length;
    const { terms: slots } = this.scratch();
    const { docs, tf } = this.matchesOf(q, (slots[0] ??= { docs: new Int32Array(n), tf: new Float64Array(n) }));
    const idf = idfOf(n, docs.length);
    const heap = new Heap(pool, this.ids);
    for (let i = 0; i < docs.length; i++) {
      const score = this.termScore(idf, tf[i]!, docs[i]!);
      if (score >= heap.threshold) heap.offer(docs[i]!, score);
    }
    const candidates = heap.sorted().map(({ d, score }) => ({ id: this.ids[d]!, documentId: this.documents[d]!, terms: [score], score: 0 + score }));
    return { candidates, snippets: n, df: [docs.length] };
  }

  /** keyword.ts's ranking over every match (rank's), scoring each. */
  private rankEveryMatch(terms: (TsQuery | undefined)[], exclude: TsQuery[], pool: number): Ranking {
    const n = this.ids.length;
    const { excluded, scores, seen, candidates, terms: slots } = this.scratch();
    const excludedDocs = exclude.map((q) => this.matchesOf(q).docs);
    for (const docs of excludedDocs) for (const d of docs) excluded[d] = 1;
    let count = 0;
    let perTerm: TermMatches[];
    let df: number[];
    let idf: number[];
    let best: number[];
    try {
      perTerm = terms.map((q, t) => (q ? this.matchesOf(q, t < TERM_SLOTS ? (slots[t] ??= { docs: new Int32Array(n), tf: new Float64Array(n) }) : undefined) : NO_MATCHES));
      // As in the SQL, a term's df counts the snippets it is read in: excluded ones are not.
      df = perTerm.map((m) => {
        let read = excludedDocs.length ? 0 : m.docs.length;
        if (excludedDocs.length) for (const d of m.docs) if (!excluded[d]) read++;
        return read;
      });
      idf = df.map((f) => idfOf(n, f));
      for (let t = 0; t < perTerm.length; t++) {
        const { docs, tf } = perTerm[t]!;
        const w = idf[t]!;
        if (count === 0 && !excludedDocs.length) {
          // The first term that matches: each of its snippets is a new candidate (0 + its score is its score).
          for (let i = 0; i < docs.length; i++) {
            const d = docs[i]!;
            seen[d] = 1;
            candidates[i] = d;
            scores[d] = this.termScore(w, tf[i]!, d);
          }
          count = docs.length;
          continue;
        }
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i]!;
          if (excluded[d]) continue;
          if (!seen[d]) {
            seen[d] = 1;
            candidates[count++] = d;
          }
          scores[d]! += this.termScore(w, tf[i]!, d);
        }
      }
      // The best `pool` by score then id: a bounded selection, since a common word matches tens of thousands.
      best = topBy(candidates.subarray(0, count), pool, scores, this.ids);
    } finally {
      for (let i = 0; i < count; i++) {
        scores[candidates[i]!] = 0;
        seen[candidates[i]!] = 0;
      }
      for (const docs of excludedDocs) for (const d of docs) excluded[d] = 0;
    }
    const ranked = best.map((d) => {
      const termScores = perTerm.map((m, t) => {
        const i = indexOf(m.docs, d);
        return i < 0 ? 0 : this.termScore(idf[t]!, m.tf[i]!, d);
      });
      return { id: this.ids[d]!, documentId: this.documents[d]!, terms: termScores, score: termScores.reduce((a, b) => a + b, 0) };
    });
    return { candidates: ranked, snippets: n, df };
  }

  /**
   * rankEveryMatch for a query of several terms excluding nothing, by MaxScore (Turtle and Flood's pruning): the same
   * candidates, scores and order, without scoring every match. Each term's score is at most its bound (its idf times
   * the largest saturated tf of its matches); once the best `pool` are held, a snippet matching only terms whose
   * bounds add up to less than the worst held cannot enter, so only the matches of the other terms are walked, in
   * snippet order, and the cheap terms are looked up for a snippet only while it can still enter. A common word's
   * matches (a question's "configure", "error") are then mostly skipped instead of each scored.
   */
  private rankByMaxScore(terms: (TsQuery | undefined)[], pool: number): Ranking {
    const n = this.ids.length;
    const { terms: slots } = this.scratch();
    const perTerm = terms.map((q, t) => (q ? this.matchesOf(q, t < TERM_SLOTS ? (slots[t] ??= { docs: new Int32Array(n), tf: new Float64Array(n) }) : undefined) : NO_MATCHES));
    const df = perTerm.map((m) => m.docs.length);
    const idf = df.map((f) => idfOf(n, f));
    const bound = perTerm.map((m, t) => (m.docs.length ? idf[t]! * (K1 + 1) * this.bestRatio(m) * BOUND_MARGIN : 0));
    // Terms by bound, smallest first; below[i] is what the first i of them can add at most.
    const order = perTerm.map((_, t) => t).filter((t) => perTerm[t]!.docs.length > 0).sort((a, b) => bound[a]! - bound[b]!);
    const below = new Float64Array(order.length + 1);
    for (let i = 0; i < order.length; i++) below[i + 1] = below[i]! + bound[order[i]!]!;
    const next = new Int32Array(terms.length);
    const score = new Float64Array(terms.length);
    const heap = new Heap(pool, this.ids);
    // order[essential..] are walked; a snippet matching only order[..essential) scores under the worst held.
    let essential = 0;
    for (;;) {
      while (essential < order.length && below[essential + 1]! < heap.threshold) essential++;
      let d = NO_SNIPPET;
      for (let i = essential; i < order.length; i++) {
        const m = perTerm[order[i]!]!;
        const j = next[order[i]!]!;
        if (j < m.docs.length && m.docs[j]! < d) d = m.docs[j]!;
      }
      if (d === NO_SNIPPET) break;
      let partial = 0;
      for (let i = essential; i < order.length; i++) {
        const t = order[i]!;
        const m = perTerm[t]!;
        const j = next[t]!;
        if (j < m.docs.length && m.docs[j] === d) {
          partial += score[t] = this.termScore(idf[t]!, m.tf[j]!, d);
          next[t] = j + 1;
        } else score[t] = 0;
      }
      // The skipped terms, largest bound first, while the snippet could still enter.
      let i = essential - 1;
      for (; i >= 0 && partial + below[i + 1]! >= heap.threshold; i--) {
        const t = order[i]!;
        const m = perTerm[t]!;
        const j = (next[t] = seek(m.docs, next[t]!, d));
        partial += score[t] = j < m.docs.length && m.docs[j] === d ? this.termScore(idf[t]!, m.tf[j]!, d) : 0;
      }
      if (i >= 0) continue;
      // Summed in the terms' order, as rankEveryMatch sums them: the same score to the last bit.
      let sum = 0;
      for (let t = 0; t < terms.length; t++) sum += score[t]!;
      heap.offer(d, sum);
    }
    const candidates = heap.sorted().map(({ d }) => {
      const termScores = perTerm.map((m, t) => {
        const j = indexOf(m.docs, d);
        return j < 0 ? 0 : this.termScore(idf[t]!, m.tf[j]!, d);
      });
      return { id: this.ids[d]!, documentId: this.documents[d]!, terms: termScores, score: termScores.reduce((a, b) => a + b, 0) };
    });
    return { candidates, snippets: n, df };
  }

  /** A term's largest `tf / (tf + lengthNorm)`: its score is at most idf * (K1 + 1) times this. Kept on kept matches. */
  private bestRatio(m: TermMatches): number {
    if (m.bestRatio !== undefined) return m.bestRatio;
    let best = 0;
    for (let i = 0; i < m.docs.length; i++) best = Math.max(best, m.tf[i]! / (m.tf[i]! + this.lengthNorms[m.docs[i]!]!));
    if (m.kept) m.bestRatio = best;
    return best;
  }

  private scratchSpace: { scores: Float64Array; seen: Uint8Array; excluded: Uint8Array; candidates: Int32Array; terms: TermMatches[] } | undefined;

  /**
   * Per-snippet arrays for one ranking at a time (ranking runs to its end without awaiting), zeroed again where they
   * were used: a query at 100k snippets would otherwise allocate a megabyte or two, and the garbage collector's pauses
   * showed in the p95.
   */
  private scratch() {
    const n = this.ids.length;
    this.scratchSpace ??= { scores: new Float64Array(n), seen: new Uint8Array(n), excluded: new Uint8Array(n), candidates: new Int32Array(n), terms: [] };
    return this.scratchSpace;
  }

  private termScore(idf: number, tf: number, d: number): number {
    return (idf * tf * (K1 + 1)) / (tf + this.lengthNorms[d]!);
  }

  dispose(): void {
    this.lexemes.clear();
    this.keptTerms.clear();
    this.keptBytes = 0;
  }
}

/** A query of lexemes joined by `|` only. */
function isDisjunction(q: TsQuery): boolean {
  return q.op === 'lexeme' || (q.op === 'or' && isDisjunction(q.left) && isDisjunction(q.right));
}

function union(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i]! : Infinity;
    const y = j < b.length ? b[j]! : Infinity;
    out[n++] = x <= y ? x : y;
    if (x <= y) i++;
    if (y <= x) j++;
  }
  return out.subarray(0, n);
}

function intersection(a: Int32Array, b: Int32Array): Int32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = new Int32Array(a.length);
  let n = 0;
  for (const d of a) if (indexOf(b, d) >= 0) out[n++] = d;
  return out.subarray(0, n);
}

/** The first position at or after `from` of an ascending array whose value is at least `d`: galloping, then halving. */
function seek(sorted: Int32Array, from: number, d: number): number {
  let step = 1;
  let lo = from;
  let hi = from;
  while (hi < sorted.length && sorted[hi]! < d) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = Math.min(hi, sorted.length);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Position of `d` in an ascending array, or -1. */
function indexOf(sorted: Int32Array, d: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === d ? lo : -1;
}

/** The `limit` best of `items` by score descending, then id, best first, without sorting them all. */
function topBy(items: Int32Array, limit: number, scores: Float64Array, ids: string[]): number[] {
  // The limit-th best score, through a min-heap of the best scores seen; then an exact order among those at or above it.
  const heap = new Float64Array(limit);
  let size = 0;
  for (let i = 0; i < items.length; i++) {
    const s = scores[items[i]!]!;
    if (size < limit) {
      let c = size++;
      for (let p = (c - 1) >> 1; c > 0 && heap[p]! > s; c = p, p = (c - 1) >> 1) heap[c] = heap[p]!;
      heap[c] = s;
    } else if (s > heap[0]!) {
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        if (l >= limit) break;
        const m = l + 1 < limit && heap[l + 1]! < heap[l]! ? l + 1 : l;
        if (heap[m]! >= s) break;
        heap[c] = heap[m]!;
        c = m;
      }
      heap[c] = s;
    }
  }
  const threshold = size < limit ? -Infinity : heap[0]!;
  const chosen: { d: number; score: number; id: string }[] = [];
  for (let i = 0; i < items.length; i++) {
    const d = items[i]!;
    if (scores[d]! >= threshold) chosen.push({ d, score: scores[d]!, id: ids[d]! });
  }
  return chosen
    .sort(before)
    .slice(0, limit)
    .map((x) => x.d);
}

/** The `limit` best snippets offered, by score descending then id (as `before`): a heap whose root is the worst held. */
class Heap {
  private readonly docs: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;
  /** The worst score held once `limit` are (nothing scoring below it can enter); -Infinity until then. */
  threshold = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly ids: string[],
  ) {
    this.docs = new Int32Array(limit);
    this.scores = new Float64Array(limit);
  }

  /** a ranks below b. */
  private worse(sa: number, da: number, sb: number, db: number): boolean {
    return sa < sb || (sa === sb && this.ids[da]! > this.ids[db]!);
  }

  /** Offers a snippet: kept if it ranks above the worst held, or fewer than `limit` are held. */
  offer(d: number, score: number): void {
    if (this.size < this.limit) {
      let c = this.size++;
      for (let p = (c - 1) >> 1; c > 0 && this.worse(score, d, this.scores[p]!, this.docs[p]!); c = p, p = (c - 1) >> 1) {
        this.scores[c] = this.scores[p]!;
        this.docs[c] = this.docs[p]!;
      }
      this.scores[c] = score;
      this.docs[c] = d;
      if (this.size < this.limit) return;
    } else {
      if (!this.worse(this.scores[0]!, this.docs[0]!, score, d)) return;
      let c = 0;
      for (;;) {
        const l = 2 * c + 1;
        if (l >= this.limit) break;
        const m = l + 1 < this.limit && this.worse(this.scores[l + 1]!, this.docs[l + 1]!, this.scores[l]!, this.docs[l]!) ? l + 1 : l;
        if (!this.worse(this.scores[m]!, this.docs[m]!, score, d)) break;
        this.scores[c] = this.scores[m]!;
        this.docs[c] = this.docs[m]!;
        c = m;
      }
      this.scores[c] = score;
      this.docs[c] = d;
    }
    this.threshold = this.scores[0]!;
  }

  /** What is held, best first. */
  sorted(): { d: number; score: number; id: string }[] {
    return Array.from(this.docs.subarray(0, this.size), (d, i) => ({ d, score: this.scores[i]!, id: this.ids[d]! })).sort(before);
  }
}

/** Rows read per round trip while an index loads; the event loop runs between them. */
const LOAD_PAGE = 1000;

/** A scope's index would not fit in the cache: refused from its counts, or stopped once it outgrew the cache. */
export class KeywordIndexTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(`the keyword index is over ${Math.ceil(bytes / 1048576)} MB`);
  }
}

/**
 * Reads a scope's snippets' lexemes into an index, a page at a time through a cursor; stops with
 * KeywordIndexTooLargeError as soon as it would take more than `maxBytes`. The scope's snippets and postings are
 * counted first, in PostgreSQL: an index that cannot fit is refused before anything is read into this process,
 * and the arrays of one that can are allocated at their size (a replica's peak memory: bench/README.md, "Scale").
 */
export async function loadKeywordIndex(em: EntityManager, scope: Scope, maxBytes = Infinity): Promise<KeywordIndex> {
  const builder = await em.transactional(async (tx) => {
    const [counted] = await execute<{ snippets: number; postings: number }[]>(
      tx,
      sql`select count(*)::int as snippets, coalesce(sum(length(s.search_vector)), 0)::float8 as postings from snippet s where ${inScope(scope)}`,
    );
    const expected = { snippets: counted!.snippets, postings: counted!.postings };
    const least = IndexBuilder.bytes(expected.snippets, expected.postings);
    if (least > maxBytes) throw new KeywordIndexTooLargeError(least);
    const builder = new IndexBuilder(expected);
    // A cursor's query cannot take parameters: PostgreSQL quotes the scope into it (format's %L).
    const select = 'declare keyword_index no scroll cursor for select s.id, s.document_id, s.search_vector::text as v from snippet s where s.repository_id = %L and ';
    const text =
      scope.versionId === null
        ? sql`select format(${select + 's.version_id is null'}, ${scope.repositoryId}::text) as q`
        : sql`select format(${select + 's.version_id = %L'}, ${scope.repositoryId}::text, ${scope.versionId}::text) as q`;
    const [{ q }] = await execute<[{ q: string }]>(tx, text);
    await tx.execute(q);
    for (;;) {
      const rows = (await tx.execute(`fetch ${LOAD_PAGE} from keyword_index`)) as { id: string; document_id: string; v: string | null }[];
      for (const r of rows) builder.add(r.id, r.document_id, r.v ?? '');
      if (builder.bytes > maxBytes) throw new KeywordIndexTooLargeError(builder.bytes);
      if (rows.length < LOAD_PAGE) break;
      await yieldToEvents();
    }
    return builder;
  });
  return builder.finish();
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
    const [row] = await execute<Record<string, string>[]>(em, q);
    missing.forEach((t, i) => {
      if (termQueryCache.size >= TERM_CACHE_SIZE) termQueryCache.delete(termQueryCache.keys().next().value!);
      termQueryCache.set(t, parseTsQuery(row![`q${i}`] ?? ''));
    });
  }
  return terms.map((t) => termQueryCache.get(t));
}

/** keywordSearch (keyword.ts) answered from an index: the same query syntax, ranking and page evidence. */
export async function searchKeywordIndex(em: EntityManager, index: KeywordIndex, query: string, limit: number): Promise<Ranked[]> {
  return rankCandidates(await indexCandidates(em, index, query, limit), limit);
}

/** keywordCandidates (keyword.ts) from an index: the same candidates and statistics. */
export async function indexCandidates(em: EntityManager, index: KeywordIndex, query: string, limit: number): Promise<KeywordCandidates | undefined> {
  const parsed = parseQuery(query);
  if (!parsed.include.length) return undefined;
  const [terms, exclude] = await Promise.all([termQueries(em, parsed.include), termQueries(em, parsed.exclude)]);
  const ranking = index.rankWithStatistics(terms, exclude.filter((q): q is TsQuery => q !== undefined), Math.max(limit, EVIDENCE_POOL));
  return { ...ranking, naming: { terms: parsed.include, ...(await pageNames(em, ranking.candidates.map((c) => c.documentId))) } };
}
