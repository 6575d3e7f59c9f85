import type { EntityManager } from '@mikro-orm/postgresql';
import { TEXT_ARRAY, textArray } from '../db/sql.js';

/**
 * A snippet content's part of its keyword vector, `setweight(to_tsvector('simple', c) || to_tsvector('english', c), 'C')`
 * of `snippet_search_vector_of` (Migration20261210000000_search_vector_parts), put together in Node from the vectors
 * of its words, so PostgreSQL parses each distinct word once instead of every snippet's content twice (that parse was
 * most of a first index's PostgreSQL time: bench/README.md, "Index"). The result is a tsvector without weights
 * (Migration20261213000000_content_vectors gives it C) in PostgreSQL's binary form, a `tsvector[]` sent as a bound
 * parameter, which PostgreSQL takes in without parsing it (parsing its text form was most of what was left of the
 * vectors' cost), and the same vector, lexemes and positions: test/docindex/content-vectors.test.ts compares the two
 * on real files.
 *
 * Why it is the same. PostgreSQL's default parser never makes a token of an ASCII blank (space, tab, newline,
 * carriage return), so the content is cut there into chunks and its tokens are the chunks' tokens in order; a
 * chunk is parsed after a space (`' ' || chunk`), the state the parser is in after a blank, except the content's
 * first, parsed as it begins. Each token takes the next position in both configurations (a stop word too, which
 * `english` drops), so a chunk's positions are those of its tokens shifted by the tokens before it, which is the
 * number of positions in its `simple` vector. `||` shifts the `english` vector by the largest `simple` position.
 * What a chunk cannot tell is left to PostgreSQL (null): a tag or comment that spans a blank (`<a href="x">`,
 * `<!-- ... -->`), text after `<script` or `<style` (which the parser skips), and the limits of a tsvector (a lexeme's
 * 255 positions in a parse, positions above 16,383) where PostgreSQL truncates.
 */

/**
 * PostgreSQL's largest position (MAXENTRYPOS - 1), and the positions of a lexeme a vector keeps: a parse keeps 255
 * (MAXNUMPOS - 1), `||` up to 256; a content with more of one lexeme in its two halves is left to PostgreSQL.
 */
const MAX_POSITION = 16_383;
const MAX_POSITIONS = 255;
/** A character whose UTF-16 units do not sort as its UTF-8 bytes against every other: a surrogate, or one after them. */
const WIDE = /[\uD800-\uFFFF]/;
/** PostgreSQL's type oid of `tsvector`, which a binary array names for its elements. */
const TSVECTOR_OID = 3614;
/**
 * Distinct chunks kept, with their vectors (about 250 bytes each); emptied when full, so that with a call's new ones
 * (ASK_LIMIT) at most 250,000 are held, about 60 MB. One library's files share most of their words: 12 MB of real
 * Markdown and JavaScript hold about 150,000 distinct chunks.
 */
const CACHE_CHUNKS = 200_000;
/** Chunks asked of PostgreSQL per statement, and at most per call (the rest are left to PostgreSQL whole). */
const ASK_BATCH = 5_000;
const ASK_LIMIT = 50_000;

/**
 * Text the parser may read across a blank: a tag (`<` then a letter, `_`, `:`, `/`, `!` or `?`, which is where
 * PostgreSQL starts one) with a blank or a quote before its `>` (a quoted value may hold a `>`), a comment, or a script
 * or style, whose content the parser skips. `a < b`, `x<=y` and `Array<string>` are no tags.
 */
const SPANS_BLANK = /<[A-Za-z_:/!?][^<>"'\s]*[\s"']|<!--|<script|<style/i;
const BLANKS = /[ \t\n\r]+/;
/** What list numbering needs: a digit before `.` or `)`. */
const NUMBERING = /[0-9][.)]/;

/**
 * `gristmill_unnumbered` (Migration20261127000000_search_stems): list numbering at a line's start dropped. PostgreSQL's
 * `n` flag makes `^` and `$` match at `\n` only, which JavaScript's `m` flag does not (it also takes `\r`), hence the
 * explicit lookarounds.
 */
export function unnumbered(text: string): string {
  if (!NUMBERING.test(text)) return text;
  return text.replace(/(?<=^|\n)([ \t>]*)[0-9]{1,9}[.)](?=[ \t\n]|$)/g, '$1');
}

/** Reads a tsvector's text output without weights (`'a':1,3 'b''s':2`) into lexeme ids and positions; returns the positions' count. */
function readVector(text: string, lexemeId: (lexeme: string) => number, out: number[]): number {
  let positions = 0;
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    // A lexeme is quoted, with '' for a quote and \ before a quote or backslash.
    let j = i + 1;
    let lexeme = '';
    for (;;) {
      const ch = text[j]!;
      if (ch === "'") {
        if (text[j + 1] === "'") {
          lexeme += "'";
          j += 2;
          continue;
        }
        break;
      }
      if (ch === '\\') {
        lexeme += text[j + 1]!;
        j += 2;
        continue;
      }
      lexeme += ch;
      j++;
    }
    j++;
    const id = lexemeId(lexeme);
    if (text[j] === ':') {
      j++;
      let n = 0;
      for (; j < text.length && text[j] !== ' '; j++) {
        const c = text.charCodeAt(j);
        if (c === 44) {
          out.push(id, n);
          positions++;
          n = 0;
        } else if (c >= 48 && c <= 57) n = n * 10 + c - 48;
      }
      out.push(id, n);
      positions++;
    }
    i = j;
  }
  return positions;
}

/**
 * Builds content vectors, keeping the chunks' vectors between batches. A chunk's vectors live in one pool of
 * integers, at the offset its map holds: its token count, the lengths of its `simple` and `english` pairs, then the
 * pairs (lexeme id, position), so a chunk costs a map entry and a few integers, not objects of its own.
 */
export class ContentVectors {
  /** Chunks after a blank, and chunks that begin a content, to their offset in `pool`. */
  private readonly chunks = new Map<string, number>();
  private readonly firstChunks = new Map<string, number>();
  private pool = new Int32Array(1 << 16);
  private used = 0;
  private readonly lexemes = new Map<string, number>();
  /** Each lexeme, its UTF-8 bytes, and whether it holds a character from U+D800 on, by id. */
  private readonly strings: string[] = [];
  private readonly bytes: Buffer[] = [];
  private readonly wide: boolean[] = [];
  /** Each lexeme's rank in PostgreSQL's order of lexemes (their bytes compared), by id; `ranked` of them are ranked. */
  private ranks = new Int32Array(1 << 12);
  private ranked = 0;
  /** The lexeme ids in that order. */
  private order: number[] = [];
  /**
   * The content being put together, by lexeme id: its positions' count, where its positions go in `positions`, and
   * the content that last saw it (`stamp`), so that nothing is cleared between contents; its lexemes' ranks in
   * `distinct`. Grown as needed.
   */
  private count = new Int32Array(1 << 12);
  private start = new Int32Array(1 << 12);
  private seen = new Int32Array(1 << 12);
  private stamp = 0;
  private distinct = new Int32Array(1 << 10);
  private positions = new Uint16Array(1 << 12);

  /**
   * Each content's vector, in order, as one binary `tsvector[]` for a bound parameter (a null element: PostgreSQL
   * computes that one), asking PostgreSQL for the vectors of the chunks it has not seen.
   */
  async of(em: EntityManager, contents: readonly string[]): Promise<Buffer> {
    if (this.chunks.size + this.firstChunks.size > CACHE_CHUNKS) this.clear();
    // Each content's chunks' offsets, looked up once; a chunk not seen yet is asked for, then its slot filled. Only
    // the chunks not seen are kept until then: holding every chunk of a batch's contents across the question made
    // them outlive the young generation, and collecting them was a quarter of this function's time.
    const resolved: ({ offsets: number[]; unknown: number[]; chunks: string[] } | null)[] = [];
    const missing = new Set<string>();
    const missingFirst = new Set<string>();
    /** The map of the chunk at index `i` of a content's parts: the first one begins the content. */
    const mapOf = (i: number) => (i === 0 ? this.firstChunks : this.chunks);
    for (const content of contents) {
      const text = unnumbered(content);
      if (SPANS_BLANK.test(text)) {
        resolved.push(null);
        continue;
      }
      // A content that begins with a blank has an empty first part (its first chunk follows a blank), and one that
      // ends with a blank an empty last part.
      const parts = text.split(BLANKS);
      const offsets: number[] = [];
      // (slot in `offsets`, whether it begins the content) of each chunk not seen yet, and the chunk.
      const unknown: number[] = [];
      const chunks: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        if (part === '') continue;
        const o = mapOf(i).get(part);
        if (o === undefined) {
          unknown.push(offsets.length, i === 0 ? 0 : 1);
          chunks.push(part);
        }
        offsets.push(o ?? -1);
      }
      // Past ASK_LIMIT new chunks in one call (a file of random words), the rest is left to PostgreSQL.
      if (unknown.length && missing.size + missingFirst.size + unknown.length / 2 > ASK_LIMIT) {
        resolved.push(null);
        continue;
      }
      for (let k = 1; k < unknown.length; k += 2) (unknown[k] === 0 ? missingFirst : missing).add(chunks[k >> 1]!);
      resolved.push({ offsets, unknown, chunks });
    }
    await this.ask(em, [...missingFirst], '', this.firstChunks);
    await this.ask(em, [...missing], ' ', this.chunks);
    this.rank();
    const out = new ArrayWriter(contents.length);
    for (const r of resolved) {
      if (!r) {
        out.none();
        continue;
      }
      for (let k = 0; k < r.unknown.length; k += 2) r.offsets[r.unknown[k]!] = mapOf(r.unknown[k + 1]!).get(r.chunks[k >> 1]!)!;
      this.assemble(r.offsets, out);
    }
    return out.done();
  }

  private clear(): void {
    this.chunks.clear();
    this.firstChunks.clear();
    this.used = 0;
    this.lexemes.clear();
    this.strings.length = 0;
    this.bytes.length = 0;
    this.wide.length = 0;
    this.ranked = 0;
    this.order = [];
  }

  private lexemeId = (lexeme: string): number => {
    let id = this.lexemes.get(lexeme);
    if (id === undefined) {
      id = this.bytes.length;
      this.lexemes.set(lexeme, id);
      this.strings.push(lexeme);
      this.bytes.push(Buffer.from(lexeme, 'utf8'));
      this.wide.push(WIDE.test(lexeme));
    }
    return id;
  };

  /**
   * Ranks the lexemes seen since the last call among the others, in the order PostgreSQL keeps a vector's lexemes
   * (their bytes compared, a prefix first): its binary input takes a vector so ordered as it is, and sorts one that
   * is not.
   */
  private rank(): void {
    const total = this.bytes.length;
    if (this.ranked === total) return;
    const added = Array.from({ length: total - this.ranked }, (_, i) => this.ranked + i).sort(this.compare);
    const merged: number[] = [];
    let i = 0;
    let j = 0;
    while (i < this.order.length || j < added.length) {
      if (j === added.length || (i < this.order.length && this.compare(this.order[i]!, added[j]!) < 0)) merged.push(this.order[i++]!);
      else merged.push(added[j++]!);
    }
    this.order = merged;
    if (this.ranks.length < total) this.ranks = new Int32Array(Math.max(total, this.ranks.length * 2));
    for (let r = 0; r < merged.length; r++) this.ranks[merged[r]!] = r;
    this.ranked = total;
  }

  /**
   * Two lexemes in PostgreSQL's order, their UTF-8 bytes compared, which is the order of their code points: for
   * characters below U+D800, JavaScript's order of strings (by UTF-16 units) is the same, and cheaper.
   */
  private compare = (a: number, b: number): number => {
    if (this.wide[a] || this.wide[b]) return Buffer.compare(this.bytes[a]!, this.bytes[b]!);
    const x = this.strings[a]!;
    const y = this.strings[b]!;
    return x < y ? -1 : x > y ? 1 : 0;
  };

  private async ask(em: EntityManager, chunks: string[], before: string, into: Map<string, number>): Promise<void> {
    const pairs: number[] = [];
    for (let i = 0; i < chunks.length; i += ASK_BATCH) {
      const batch = chunks.slice(i, i + ASK_BATCH);
      const rows: { s: string; e: string }[] = await em.execute(
        `select to_tsvector('simple', ? || c)::text as s, to_tsvector('english', ? || c)::text as e
         from unnest(${TEXT_ARRAY}) with ordinality as u(c, n) order by n`,
        [before, before, textArray(batch)],
      );
      rows.forEach((r, k) => {
        pairs.length = 0;
        const tokens = readVector(r.s, this.lexemeId, pairs);
        const simple = pairs.length;
        readVector(r.e, this.lexemeId, pairs);
        if (this.used + 3 + pairs.length > this.pool.length) {
          const grown = new Int32Array(Math.max(this.pool.length * 2, this.used + 3 + pairs.length));
          grown.set(this.pool.subarray(0, this.used));
          this.pool = grown;
        }
        into.set(batch[k]!, this.used);
        this.pool[this.used++] = tokens;
        this.pool[this.used++] = simple;
        this.pool[this.used++] = pairs.length - simple;
        this.pool.set(pairs, this.used);
        this.used += pairs.length;
      });
    }
  }

  /**
   * Writes the vector of the chunks at these offsets, in order, or none where PostgreSQL would truncate. A lexeme's
   * positions come in ascending order as the chunks are read (each chunk's positions follow the chunks' before it, and
   * the `english` half follows the `simple` one), so they are grouped by lexeme as read, and only the content's
   * distinct lexemes are sorted: sorting every (lexeme, position) pair was most of this function's time.
   */
  private assemble(offsets: readonly number[], out: ArrayWriter): void {
    const pool = this.pool;
    const total = this.bytes.length;
    if (this.count.length < total) {
      const size = Math.max(total, this.count.length * 2);
      this.count = new Int32Array(size);
      this.start = new Int32Array(size);
      this.seen = new Int32Array(size);
    }
    const { count, start, seen } = this;
    const stamp = ++this.stamp;
    // The lexemes, each counted; the simple half's last position, which `||` shifts the english half by.
    let distinct = 0;
    let pairs = 0;
    let tokens = 0;
    let maxPosition = 0;
    for (const o of offsets) {
      const simpleEnd = o + 3 + pool[o + 1]!;
      const end = simpleEnd + pool[o + 2]!;
      for (let i = o + 3; i < end; i += 2) {
        const id = pool[i]!;
        if (seen[id] !== stamp) {
          seen[id] = stamp;
          count[id] = 0;
          if (this.distinct.length <= distinct) this.distinct = grow(this.distinct, distinct + 1);
          this.distinct[distinct++] = this.ranks[id]!;
        }
        count[id]!++;
        if (i < simpleEnd && tokens + pool[i + 1]! > maxPosition) maxPosition = tokens + pool[i + 1]!;
      }
      pairs += (end - o - 3) / 2;
      tokens += pool[o]!;
    }
    if (maxPosition + tokens > MAX_POSITION) return out.none();
    // Lexemes in PostgreSQL's order, each given its place among the positions.
    const ranked = this.distinct.subarray(0, distinct).sort();
    let at = 0;
    for (let k = 0; k < distinct; k++) {
      const id = this.order[ranked[k]!]!;
      if (count[id]! > MAX_POSITIONS) return out.none();
      start[id] = at;
      at += count[id]!;
    }
    if (this.positions.length < pairs) this.positions = new Uint16Array(Math.max(pairs, this.positions.length * 2));
    const positions = this.positions;
    let offset = 0;
    for (const o of offsets) {
      const end = o + 3 + pool[o + 1]!;
      for (let i = o + 3; i < end; i += 2) positions[start[pool[i]!]!++] = offset + pool[i + 1]!;
      offset += pool[o]!;
    }
    // `||` shifts the english vector's positions by the simple vector's largest.
    offset = maxPosition;
    for (const o of offsets) {
      const begin = o + 3 + pool[o + 1]!;
      const end = begin + pool[o + 2]!;
      for (let i = begin; i < end; i += 2) positions[start[pool[i]!]!++] = offset + pool[i + 1]!;
      offset += pool[o]!;
    }
    // PostgreSQL's binary form (tsvectorsend): the lexemes' count, then each lexeme's bytes ended by a zero, its
    // positions' count and the positions (16 bits each, weight D: the high bits clear). `start` now marks each
    // lexeme's end.
    out.begin();
    for (let k = 0; k < distinct; k++) {
      const id = this.order[ranked[k]!]!;
      out.lexeme(this.bytes[id]!, positions, start[id]! - count[id]!, count[id]!);
    }
    out.end(distinct);
  }
}

/** A copy of `a` with room for at least `n` elements. */
function grow(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(Math.max(n, a.length * 2));
  grown.set(a);
  return grown;
}

/**
 * A one-dimensional `tsvector[]` in PostgreSQL's binary form (array_send): dimensions, a null flag, the element
 * type, the length and lower bound, then each element's length (-1: null) and bytes.
 */
class ArrayWriter {
  private buf = Buffer.allocUnsafe(1 << 16);
  private at = 20;
  private hasNull = false;
  /** Where the element being written begins (its length), while one is. */
  private start = -1;

  constructor(private readonly length: number) {}

  none(): void {
    this.room(4);
    this.buf.writeInt32BE(-1, this.at);
    this.at += 4;
    this.hasNull = true;
  }

  /** Begins an element: room for its length and its lexemes' count, which `end` writes. */
  begin(): void {
    this.room(8);
    this.start = this.at;
    this.at += 8;
  }

  /** Ends the element, writing its length and its lexemes' count (its first four bytes). */
  end(lexemes: number): void {
    this.buf.writeInt32BE(this.at - this.start - 4, this.start);
    this.buf.writeInt32BE(lexemes, this.start + 4);
    this.start = -1;
  }

  /** A lexeme of the element: its bytes ended by a zero, its positions' count, and its `count` positions from `from`. */
  lexeme(bytes: Buffer, positions: Uint16Array, from: number, count: number): void {
    this.room(bytes.length + 3 + 2 * count);
    const buf = this.buf;
    let at = this.at;
    at += bytes.copy(buf, at);
    buf[at++] = 0;
    buf[at++] = count >> 8;
    buf[at++] = count & 255;
    for (let k = from; k < from + count; k++) {
      const p = positions[k]!;
      buf[at++] = p >> 8;
      buf[at++] = p & 255;
    }
    this.at = at;
  }

  done(): Buffer {
    const head = this.buf;
    if (this.length === 0) {
      // No dimensions: the empty array.
      head.writeInt32BE(0, 8);
      head.writeInt32BE(0, 12);
      head.writeInt32BE(TSVECTOR_OID, 16);
      return head.subarray(8, 20);
    }
    head.writeInt32BE(1, 0);
    head.writeInt32BE(this.hasNull ? 1 : 0, 4);
    head.writeInt32BE(TSVECTOR_OID, 8);
    head.writeInt32BE(this.length, 12);
    head.writeInt32BE(1, 16);
    return head.subarray(0, this.at);
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}
