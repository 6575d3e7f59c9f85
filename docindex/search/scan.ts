import type { Dots } from './simd.js';

/**
 * How a matrix sits in its WebAssembly memory: `rows` rows of `stride` floats from byte 0, then one scratch slot per
 * scanner (a query of `stride` floats and a score per row). Each scanner (a scan thread, or the main thread) owns one
 * slot and runs one scan at a time, so scans never share scratch space. Shared by the main thread and scan threads.
 */
export interface Layout {
  rows: number;
  stride: number;
  slots: number;
}

export const layoutBytes = (l: Layout) => 4 * (l.rows * l.stride + l.slots * (l.stride + l.rows));

function slot(memory: WebAssembly.Memory, l: Layout, i: number) {
  const query = 4 * (l.rows * l.stride + i * (l.stride + l.rows));
  const scores = query + 4 * l.stride;
  return { query, scores, queryView: new Float32Array(memory.buffer, query, l.stride), scoresView: new Float32Array(memory.buffer, scores, l.rows) };
}

/** The best rows of a scan, best first: score descending, then row ascending (rows are in snippet id order). */
export interface Top {
  rows: Int32Array<ArrayBuffer>;
  scores: Float32Array<ArrayBuffer>;
}

/** Scores rows [start, end) against `query` (unit length) in slot `slotIndex`, and keeps the best `limit`. */
export function scanRange(memory: WebAssembly.Memory, dots: Dots, l: Layout, slotIndex: number, query: Float32Array, start: number, end: number, limit: number): Top {
  const s = slot(memory, l, slotIndex);
  s.queryView.set(query); // the padding after `dims` stays zero: nothing else writes there
  dots(s.query, 4 * start * l.stride, end - start, 4 * l.stride, s.scores + 4 * start);
  // A small sorted buffer of the best `limit`: cheap since limit << rows.
  const bestRow: number[] = [];
  const bestScore: number[] = [];
  let floor = -Infinity;
  const scores = s.scoresView;
  for (let r = start; r < end; r++) {
    const v = scores[r]!;
    if (bestRow.length >= limit && v <= floor) continue;
    let pos = bestRow.length;
    while (pos > 0 && bestScore[pos - 1]! < v) pos--;
    bestRow.splice(pos, 0, r);
    bestScore.splice(pos, 0, v);
    if (bestRow.length > limit) {
      bestRow.pop();
      bestScore.pop();
    }
    if (bestRow.length >= limit) floor = bestScore[bestScore.length - 1]!;
  }
  return { rows: Int32Array.from(bestRow), scores: Float32Array.from(bestScore) };
}

/** Merges the best of several row ranges into the best `limit` overall, in the same order. */
export function mergeTop(parts: Top[], limit: number): Top {
  const all: [number, number][] = [];
  for (const p of parts) p.rows.forEach((r, i) => all.push([r, p.scores[i]!]));
  all.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const best = all.slice(0, limit);
  return { rows: Int32Array.from(best.map((b) => b[0])), scores: Float32Array.from(best.map((b) => b[1])) };
}
