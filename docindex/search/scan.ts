import { errorBound, quantizeQuery } from './quantize.js';
import type { Kernels } from './simd.js';

/**
 * How a matrix sits in its WebAssembly memory: `rows` rows of `stride` float32 values from byte 0, the same rows as
 * int8 values (quantize.ts), one float32 scale per row, then one scratch slot per scanner. A slot holds a float32
 * query, the rescoring kernel's output, up to `batch` int16 queries and a score per row for each of them. Each scanner
 * (a scan thread, or the main thread) owns one slot and runs one scan at a time, so scans never share scratch space.
 * Shared by the main thread and scan threads.
 */
export interface Layout {
  rows: number;
  /** Values per row: the dimensions padded with zeros to a multiple of LANES_PER_STEP (simd.ts). */
  stride: number;
  slots: number;
  /** Queries one scan takes at most (vectors.ts batches concurrent queries). */
  batch: number;
}

const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** Byte offsets of the layout's regions. */
function regions(l: Layout) {
  const int8 = 4 * l.rows * l.stride;
  const scales = int8 + l.rows * l.stride;
  const slots = align16(scales + 4 * l.rows);
  const slotBytes = align16(4 * l.stride + 16 + 2 * l.batch * l.stride + 4 * l.batch * l.rows);
  return { int8, scales, slots, slotBytes };
}

export const layoutBytes = (l: Layout) => regions(l).slots + l.slots * regions(l).slotBytes;

/** Views of the layout's rows, for the matrix to fill in. */
export function rowViews(memory: WebAssembly.Memory, l: Layout) {
  const r = regions(l);
  return {
    floats: new Float32Array(memory.buffer, 0, l.rows * l.stride),
    int8: new Int8Array(memory.buffer, r.int8, l.rows * l.stride),
    scales: new Float32Array(memory.buffer, r.scales, l.rows),
  };
}

function slot(memory: WebAssembly.Memory, l: Layout, i: number) {
  const query = regions(l).slots + i * regions(l).slotBytes;
  const exact = query + 4 * l.stride;
  const queries = exact + 16;
  const scores = queries + 2 * l.batch * l.stride;
  return {
    query,
    exact,
    queries,
    scores,
    queryView: new Float32Array(memory.buffer, query, l.stride),
    exactView: new Float32Array(memory.buffer, exact, 1),
    queriesView: new Int16Array(memory.buffer, queries, l.batch * l.stride),
  };
}

/** A query ready to scan: unit length, and as int16 values with the bound of the 8-bit pass's error (quantize.ts). */
export interface ScanQuery {
  vector: Float32Array;
  values: Int16Array;
  scale: number;
  bound: number;
  limit: number;
}

/** `vector` (unit length, `dims` values) for a scan of rows whose int8 scales are at most `rowScale`. */
export function scanQuery(vector: Float32Array, limit: number, l: Layout, rowScale: number): ScanQuery {
  const q = quantizeQuery(vector, l.stride);
  return { vector, values: q.values, scale: q.scale, bound: errorBound(q, vector.length, rowScale), limit };
}

/** The best rows of a scan, best first: score descending, then row ascending (rows are in snippet id order). */
export interface Top {
  rows: Int32Array<ArrayBuffer>;
  scores: Float32Array<ArrayBuffer>;
}

/**
 * Candidates the 8-bit pass keeps per query at first: twice the rows asked for (at least MIN_CANDIDATES). The exact
 * best are among them unless many rows score within the pass's error of the last one; then `rescored` takes twice as
 * many again. On random unit vectors (similarities packed close together, a hard case) the best 100 of 50,000 rows at
 * 384 dimensions needed 130 to 180.
 */
const MIN_CANDIDATES = 64;

/**
 * Scores rows [start, end) against each of `queries` (at most `l.batch`) in slot `slotIndex` in one pass over the
 * int8 rows, and keeps each query's best `limit` by the float32 rows: the same rows and scores, in the same order, as
 * scoring every row with float32 (`rescored` says why).
 */
export function scanRange(memory: WebAssembly.Memory, k: Kernels, l: Layout, slotIndex: number, queries: ScanQuery[], start: number, end: number): Top[] {
  const s = slot(memory, l, slotIndex);
  const r = regions(l);
  queries.forEach((q, b) => s.queriesView.set(q.values, b * l.stride));
  if (end > start) k.dots8(s.queries, queries.length, r.int8 + start * l.stride, end - start, l.stride, r.scales + 4 * start, s.scores + 4 * start, 4 * l.rows);
  return queries.map((q, b) => rescored(k, l, s, q, new Float32Array(memory.buffer, s.scores + 4 * b * l.rows, l.rows), start, end));
}

/**
 * The best `q.limit` rows of [start, end) by the float32 kernel, from the int8 pass's scores `approx`: its best
 * candidates are scored with float32 rows. Any other row's approximate score is at most the lowest candidate's, so
 * its exact score is at most that plus the error bound; while that is not below the last exact score kept, a row
 * left out could belong, and more candidates are taken (at worst every row).
 */
function rescored(k: Kernels, l: Layout, s: ReturnType<typeof slot>, q: ScanQuery, approx: Float32Array, start: number, end: number): Top {
  const n = end - start;
  if (q.limit <= 0 || n <= 0) return { rows: new Int32Array(0), scores: new Float32Array(0) };
  s.queryView.set(q.vector); // the padding after `dims` stays zero: nothing else writes there
  let count = Math.min(n, Math.max(2 * q.limit, MIN_CANDIDATES));
  for (;;) {
    const candidates = bestRows(approx, start, end, count);
    const exact = new Float32Array(candidates.rows.length);
    candidates.rows.forEach((row, i) => {
      k.dots(s.query, 4 * row * l.stride, 1, 4 * l.stride, s.exact);
      exact[i] = s.exactView[0]!;
    });
    const order = Array.from(candidates.rows.keys()).sort((a, b) => exact[b]! - exact[a]! || candidates.rows[a]! - candidates.rows[b]!);
    const kept = order.slice(0, q.limit);
    const top = { rows: Int32Array.from(kept, (i) => candidates.rows[i]!), scores: Float32Array.from(kept, (i) => exact[i]!) };
    if (count >= n || candidates.floor * q.scale + q.bound < top.scores[top.scores.length - 1]!) return top;
    count = Math.min(n, count * 2);
  }
}

/**
 * The `count` rows of [start, end) with the highest `scores` (ties: the lower row), in no particular order, and the
 * lowest of their scores: a binary heap whose root is the worst row kept. Rows come in ascending order, so a row
 * scoring the same as the root is the worse one: only a higher score enters a full heap.
 */
export function bestRows(scores: Float32Array, start: number, end: number, count: number): { rows: Int32Array; floor: number } {
  const size = Math.max(0, Math.min(count, end - start));
  const rows = new Int32Array(size);
  const keys = new Float32Array(size);
  // Fill, then order the first `size` rows as a heap: the worse of two equal keys is the later row.
  for (let i = 0; i < size; i++) {
    rows[i] = start + i;
    keys[i] = scores[start + i]!;
  }
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(rows, keys, size, i, rows[i]!, keys[i]!);
  for (let r = start + size; r < end; r++) {
    const v = scores[r]!;
    if (v > keys[0]!) siftDown(rows, keys, size, 0, r, v);
  }
  return { rows, floor: size ? keys[0]! : -Infinity };
}

/** Puts (row, key) at heap position `i`, moving worse children up past it. */
function siftDown(rows: Int32Array, keys: Float32Array, size: number, i: number, row: number, key: number): void {
  for (;;) {
    let child = 2 * i + 1;
    if (child >= size) break;
    const right = child + 1;
    if (right < size && (keys[right]! < keys[child]! || (keys[right] === keys[child] && rows[right]! > rows[child]!))) child = right;
    if (!(keys[child]! < key || (keys[child] === key && rows[child]! > row))) break;
    rows[i] = rows[child]!;
    keys[i] = keys[child]!;
    i = child;
  }
  rows[i] = row;
  keys[i] = key;
}

/** Merges the best of several row ranges into the best `limit` overall, in the same order. */
export function mergeTop(parts: Top[], limit: number): Top {
  const all: [number, number][] = [];
  for (const p of parts) p.rows.forEach((r, i) => all.push([r, p.scores[i]!]));
  all.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const best = all.slice(0, limit);
  return { rows: Int32Array.from(best.map((b) => b[0])), scores: Float32Array.from(best.map((b) => b[1])) };
}
